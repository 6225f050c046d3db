/**
 * The reference: the official `@a2a-js/sdk` 1.3 server stack as its README sets it up — express,
 * its JSON-RPC handler, DefaultRequestHandler and the InMemoryTaskStore — with an AgentExecutor
 * that does what our built-in actors do in the bench: `builtin/echo` for an ordinary message
 * (working, the answer in chunks of one artifact, completed) and `stream:<n>` for n artifact events.
 * A bearer check like ours runs before the handler.
 *
 * Usage: node reference.js  → prints `listening on 127.0.0.1:<port>`.
 */
import { AgentCard, Role, TaskState, type Message, type Part, type Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import express from 'express';
import { BENCH_TOKEN, chunkTextOf, echoChunks, streamCount } from './workload.ts';

const textPart = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: '',
});
const status = (state: TaskState) => ({
  state,
  message: undefined as Message | undefined,
  timestamp: new Date().toISOString(),
});

class BenchExecutor implements AgentExecutor {
  execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = ctx;
    const user = ctx.userMessage;
    const text = user.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('\n');
    const task: Task = {
      id: taskId,
      contextId,
      status: status(TaskState.TASK_STATE_SUBMITTED),
      artifacts: [],
      history: [{ ...user, taskId, contextId }],
      metadata: undefined,
    };
    bus.publish(AgentEvent.task(task));
    bus.publish(
      AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING), metadata: undefined }),
    );
    const n = streamCount(text);
    const chunks =
      n === undefined ? echoChunks(`You said: ${text}`) : Array.from({ length: n }, (_, i) => chunkTextOf(i));
    for (let i = 0; i < chunks.length; i++) {
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: 'response',
            name: 'response',
            description: '',
            parts: [textPart(chunks[i] ?? '')],
            metadata: undefined,
            extensions: [],
          },
          append: i > 0,
          lastChunk: i === chunks.length - 1,
          metadata: undefined,
        }),
      );
    }
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(TaskState.TASK_STATE_COMPLETED),
        metadata: undefined,
      }),
    );
    bus.finished();
    return Promise.resolve();
  }

  cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: '',
        status: status(TaskState.TASK_STATE_CANCELED),
        metadata: undefined,
      }),
    );
    bus.finished();
    return Promise.resolve();
  }
}

const card = AgentCard.fromJSON({
  name: 'reference',
  description: 'The @a2a-js/sdk reference stack, for the bench',
  version: '1.0.0',
  supportedInterfaces: [{ url: 'http://127.0.0.1/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [],
});

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new BenchExecutor());
const app = express();
const AUTH = `Bearer ${BENCH_TOKEN}`;
app.get('/health', (_req, res) => void res.json({ status: 'ok' }));
app.use('/a2a', (req, res, next) => {
  if (req.headers.authorization !== AUTH) return void res.status(401).json({ error: 'unauthenticated' });
  next();
});
app.use('/a2a', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));

const server = app.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`listening on 127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}\n`);
});
server.keepAliveTimeout = 5_000;
process.on('SIGTERM', () => process.exit(0));
void Role;
