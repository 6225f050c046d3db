import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  A2AClient,
  getTask,
  listTasks,
  subscribeToTask,
  type ClientStreamEvent,
  type ClientTransport,
} from '../../../../src/protocol/client/index.ts';
import {
  CALL_TRACE_ENV,
  declaredClient,
  UndeclaredCallError,
} from '../../../../src/presentation/cli/declared-client.ts';

/** A transport that answers every request and records what reached it. */
function recordingTransport(): ClientTransport & { sent: string[]; closed: boolean } {
  const t = {
    kind: 'memory' as const,
    sent: [] as string[],
    closed: false,
    request(method: string): Promise<unknown> {
      t.sent.push(method);
      return Promise.resolve({ id: 't1', contextId: 'c1', status: { state: 'TASK_STATE_COMPLETED' } });
    },
    async *stream(method: string): AsyncIterable<ClientStreamEvent> {
      t.sent.push(method);
      yield { seq: 1, result: { statusUpdate: {} } };
    },
    agentCard: () => Promise.resolve({ name: 'fake' }),
    close(): Promise<void> {
      t.closed = true;
      return Promise.resolve();
    },
  };
  return t;
}

const dir = mkdtempSync(join(tmpdir(), 'declared-client-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('declaredClient', () => {
  it('passes the methods a command declares and refuses any other before it is sent', async () => {
    const t = recordingTransport();
    const c = declaredClient('task watch', [getTask.name, subscribeToTask.name], new A2AClient(t), {});
    assert.equal((await c.call(getTask, { id: 't1' })).id, 't1');
    const events = [];
    for await (const e of c.stream(subscribeToTask, { id: 't1' })) events.push(e);
    assert.equal(events.length, 1);
    await assert.rejects(
      c.call(listTasks, {}),
      (e: unknown) => e instanceof UndeclaredCallError && /"task watch" called ListTasks/.test(e.message),
    );
    assert.deepEqual(t.sent, ['GetTask', 'SubscribeToTask'], 'the refused call never reached the transport');
    await c.close();
    assert.equal(t.closed, true);
  });

  it('appends each call to the trace file, after a line saying the command ran', async () => {
    const trace = join(dir, 'trace.tsv');
    const c = declaredClient('task get', [getTask.name], new A2AClient(recordingTransport()), {
      [CALL_TRACE_ENV]: trace,
    });
    await c.call(getTask, { id: 't1' });
    await c.call(getTask, { id: 't1' });
    await assert.rejects(c.call(listTasks, {}), UndeclaredCallError);
    assert.equal(readFileSync(trace, 'utf8'), 'task get\t\ntask get\tGetTask\ntask get\tGetTask\n');
  });
});
