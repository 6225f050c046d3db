/**
 * The persisted floor: the least an A2A server can do that keeps what it acknowledges. Bare
 * node:http and better-sqlite3 (WAL, synchronous NORMAL). A SendMessage builds the same completed
 * echo task as the floor and stores the task row and its four events (the submitted task, WORKING,
 * the answer's artifact, COMPLETED); every request whose body arrived in one event-loop turn shares
 * one transaction, and each is answered only after that transaction committed. A GetTask sends the
 * stored JSON read by primary key, unparsed. No validation, no framework, nothing else.
 *
 * Usage: node persisted-floor.ts <dataDir>  → prints `listening on 127.0.0.1:<port>`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { listenOnLoopback, sendJson as send } from './bare-http.ts';
import { BENCH_TOKEN, echoChunks, messageText } from './workload.ts';

type Json = Record<string, unknown>;

const dataDir = process.argv[2];
if (!dataDir) {
  process.stderr.write('usage: persisted-floor.ts <dataDir>\n');
  process.exit(2);
}
const db = new BetterSqlite3(join(dataDir, 'persisted-floor.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`
  create table if not exists tasks (id text primary key, context_id text not null, snapshot text not null);
  create table if not exists events (
    task_id text not null, seq integer not null, event text not null, primary key (task_id, seq)
  );
`);
const insertTask = db.prepare<[string, string, string]>(
  'insert into tasks (id, context_id, snapshot) values (?, ?, ?)',
);
const insertEvent = db.prepare<[string, number, string]>('insert into events (task_id, seq, event) values (?, ?, ?)');
const selectSnapshot = db.prepare<[string], string>('select snapshot from tasks where id = ?').pluck();

/** A task to store and the request waiting for its commit. */
interface Write {
  res: ServerResponse;
  rpcId: unknown;
  taskId: string;
  contextId: string;
  snapshot: string;
  events: string[];
}

const commit = db.transaction((batch: readonly Write[]) => {
  for (const w of batch) {
    insertTask.run(w.taskId, w.contextId, w.snapshot);
    w.events.forEach((e, seq) => insertEvent.run(w.taskId, seq, e));
  }
});

// Group commit: one transaction for what one turn of the event loop received. setImmediate runs
// in the check phase, after every I/O callback of the poll phase that queued a write.
let queued: Write[] = [];
function enqueue(w: Write): void {
  if (queued.length === 0) setImmediate(flush);
  queued.push(w);
}

function flush(): void {
  const batch = queued;
  queued = [];
  try {
    commit(batch);
  } catch (err) {
    const message = `the task could not be stored: ${err instanceof Error ? err.message : String(err)}`;
    for (const w of batch) send(w.res, errorBody(w.rpcId, -32603, message));
    return;
  }
  for (const w of batch)
    send(w.res, `{"jsonrpc":"2.0","id":${JSON.stringify(w.rpcId)},"result":{"task":${w.snapshot}}}`);
}

const AUTH = `Bearer ${BENCH_TOKEN}`;
const server = createServer((req, res) => {
  if (req.method === 'GET') return send(res, '{"status":"ok"}');
  if (req.headers.authorization !== AUTH) return send(res, '{"error":"unauthenticated"}', 401);
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('error', () => res.destroy());
  req.on('end', () => {
    let rpc: Json;
    try {
      rpc = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
    } catch {
      return send(res, errorBody(null, -32700, 'Parse error'));
    }
    handle(res, rpc);
  });
});

function handle(res: ServerResponse, rpc: Json): void {
  const id = rpc['id'] ?? null;
  const params = (rpc['params'] ?? {}) as Json;
  switch (rpc['method']) {
    case 'SendMessage':
      return enqueue(echoTask(res, id, params));
    case 'GetTask': {
      const snapshot = typeof params['id'] === 'string' ? selectSnapshot.get(params['id']) : undefined;
      if (snapshot === undefined) return send(res, errorBody(id, -32001, 'Task not found'));
      return send(res, `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${snapshot}}`);
    }
    default:
      return send(res, errorBody(id, -32601, 'Method not found'));
  }
}

/** The completed echo task of a message (as the floor builds it) and its four events. */
function echoTask(res: ServerResponse, rpcId: unknown, params: Json): Write {
  const message = (params['message'] ?? {}) as Json;
  const taskId = randomUUID();
  const contextId = typeof message['contextId'] === 'string' ? message['contextId'] : randomUUID();
  const at = new Date().toISOString();
  const history = [{ ...message, taskId, contextId }];
  const submitted = { id: taskId, contextId, status: { state: 'TASK_STATE_SUBMITTED', timestamp: at }, history };
  const parts = echoChunks(`You said: ${messageText(message)}`).map((text) => ({ text }));
  const artifact = { artifactId: 'response', name: 'response', parts };
  const status = (state: string): Json => ({ taskId, contextId, status: { state, timestamp: at } });
  const task = { ...submitted, status: { state: 'TASK_STATE_COMPLETED', timestamp: at }, artifacts: [artifact] };
  const events = [
    { task: submitted },
    { statusUpdate: status('TASK_STATE_WORKING') },
    { artifactUpdate: { taskId, contextId, artifact, append: false, lastChunk: true } },
    { statusUpdate: status('TASK_STATE_COMPLETED') },
  ].map((e) => JSON.stringify(e));
  return { res, rpcId, taskId, contextId, snapshot: JSON.stringify(task), events };
}

function errorBody(id: unknown, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
}

listenOnLoopback(server);
process.on('SIGTERM', () => {
  server.close();
  db.close();
  process.exit(0);
});
