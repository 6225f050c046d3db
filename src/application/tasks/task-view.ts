import type { Task } from '../../domain/a2a.model.js';

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
  const copyOf = opts.copy === false ? same : deepCopy;
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

/**
 * A deep copy of JSON data (what tasks are made of: parsed requests, stored JSON, actor output).
 * Several times cheaper than structuredClone, which serialises through the V8 value serializer.
 */
function deepCopy<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = deepCopy(value[i]);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = deepCopy((value as Record<string, unknown>)[key]);
    // A "__proto__" key (JSON.parse makes it an own property) must stay data, not a prototype.
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
    else out[key] = v;
  }
  return out as T;
}

const same = <T>(value: T): T => value;
