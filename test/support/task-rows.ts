/** A bare `tasks` row, for store tests that need a task to exist (foreign keys) without the task repository. */
export function taskRow(id: string, at = '2026-03-01T10:00:00.000Z') {
  return {
    id,
    context_id: 'c1',
    owner: 'alice',
    state: 'TASK_STATE_WORKING',
    created_at: at,
    updated_at: at,
    seq: 0,
    snapshot: '{}',
    runner_id: null,
    message_id: null,
    message_hash: null,
  };
}
