/**
 * The floor: a bare node:http server doing the same JSON work as an A2A server and nothing else —
 * parse the request, build or look up the task (ProtoJSON shapes, as our server answers them),
 * serialise the response; SSE for the streaming methods. No validation, no persistence, no
 * framework. What any A2A server on Node.js costs at the least.
 *
 * Usage: node floor.js  → prints `listening on 127.0.0.1:<port>`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback, sendJson } from './bare-http.ts';
import { BENCH_TOKEN, chunkTextOf, echoChunks, messageText, streamCount } from './workload.ts';

type Json = Record<string, unknown>;
const tasks = new Map<string, Json>();
const AUTH = `Bearer ${BENCH_TOKEN}`;

const server = createServer((req, res) => {
  if (req.method === 'GET') return send(res, 200, { status: 'ok' });
  if (req.headers.authorization !== AUTH) return send(res, 401, { error: 'unauthenticated' });
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => handle(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json));
});

function handle(_req: IncomingMessage, res: ServerResponse, rpc: Json): void {
  const id = rpc['id'];
  const params = (rpc['params'] ?? {}) as Json;
  switch (rpc['method']) {
    case 'SendMessage': {
      const task = newTask(params);
      const text = `You said: ${textOf(params)}`;
      const parts = echoChunks(text).map((t) => ({ text: t }));
      task['artifacts'] = [{ artifactId: 'response', name: 'response', parts }];
      task['status'] = { state: 'TASK_STATE_COMPLETED', timestamp: new Date().toISOString() };
      tasks.set(task['id'] as string, task);
      return send(res, 200, { jsonrpc: '2.0', id, result: { task } });
    }
    case 'GetTask': {
      const task = tasks.get(params['id'] as string);
      if (!task) return send(res, 200, { jsonrpc: '2.0', id, error: { code: -32001, message: 'Task not found' } });
      return send(res, 200, { jsonrpc: '2.0', id, result: task });
    }
    case 'SendStreamingMessage': {
      const n = streamCount(textOf(params)) ?? 1;
      const task = newTask(params);
      const taskId = task['id'] as string;
      const contextId = task['contextId'] as string;
      tasks.set(taskId, task);
      sse(res);
      let seq = 0;
      const event = (result: unknown): void =>
        void res.write(`id: ${seq++}\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result })}\n\n`);
      event({ task });
      event({
        statusUpdate: {
          taskId,
          contextId,
          status: { state: 'TASK_STATE_WORKING', timestamp: new Date().toISOString() },
        },
      });
      for (let i = 0; i < n; i++) {
        const artifact = { artifactId: 'response', name: 'response', parts: [{ text: chunkTextOf(i) }] };
        event({ artifactUpdate: { taskId, contextId, artifact, append: i > 0, lastChunk: i === n - 1 } });
      }
      event({
        statusUpdate: {
          taskId,
          contextId,
          status: { state: 'TASK_STATE_COMPLETED', timestamp: new Date().toISOString() },
        },
      });
      res.end();
      return;
    }
    case 'SubscribeToTask': {
      // An idle subscription: the task's state once, then the connection stays open.
      const task = tasks.get(params['id'] as string) ?? {
        ...newTask({ message: { parts: [{ text: '' }] } }),
        id: params['id'],
      };
      sse(res);
      res.write(`id: 0\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { task } })}\n\n`);
      return;
    }
    default:
      return send(res, 200, { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } });
  }
}

function newTask(params: Json): Json {
  const message = params['message'] as Json;
  const id = randomUUID();
  const contextId = (message['contextId'] as string | undefined) ?? randomUUID();
  return {
    id,
    contextId,
    status: { state: 'TASK_STATE_SUBMITTED', timestamp: new Date().toISOString() },
    history: [{ ...message, taskId: id, contextId }],
  };
}

function textOf(params: Json): string {
  return messageText(params['message'] as Json | undefined);
}

function sse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
}

function send(res: ServerResponse, status: number, body: unknown): void {
  sendJson(res, JSON.stringify(body), status);
}

listenOnLoopback(server);
process.on('SIGTERM', () => process.exit(0));
