import type { Task } from '../../domain/a2a.model.ts';
import { copyJson } from '../../domain/json.ts';

export interface ViewOptions {
  historyLength?: number | undefined;
  /** true: always (ListTasks asked for them); false: never; default: when there are any. */
  includeArtifacts?: boolean | undefined;
  /** false when `task` is already the caller's own copy (just loaded): the view then shares its objects. */
  copy?: boolean | undefined;
}

/**
 * A detached copy of a task for a client: `historyLength` 0 omits history, n keeps the last n
 * messages; artifacts are omitted entirely unless asked for (A2A §3.1.4, §3.2.4).
 */
export function viewTask(task: Task, opts: ViewOptions = {}): Task {
  const copyOf = opts.copy === false ? same : copyJson;
  const out: Task = { id: task.id, contextId: task.contextId, status: copyOf(task.status) };
  const artifacts = task.artifacts ?? [];
  // ProtoJSON omits an empty repeated field, except where the caller explicitly asked for it.
  if (opts.includeArtifacts === true || (opts.includeArtifacts === undefined && artifacts.length > 0))
    out.artifacts = copyOf(artifacts);
  const h = opts.historyLength;
  if (task.history && task.history.length > 0 && h !== 0) {
    const kept = h === undefined ? task.history : task.history.slice(-h);
    out.history = copyOf(kept);
  }
  if (task.metadata) out.metadata = copyOf(task.metadata);
  return out;
}

const same = <T>(value: T): T => value;
