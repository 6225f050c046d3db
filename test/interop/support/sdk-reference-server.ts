/**
 * A plain `@a2a-js/sdk` 1.3 A2A server (express + JSON-RPC handler + DefaultRequestHandler +
 * InMemoryTaskStore) with a small executor, for checking that OUR client talks to someone else's
 * server. Behaviour by the first word of the user's text:
 * - anything else: task → WORKING → artifact "Echo: <text>" → COMPLETED;
 * - `slow …`: task → WORKING, then waits until cancelled (→ CANCELED);
 * - `direct …`: a direct Message reply "Direct: <text>".
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AgentCard, Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent, type Part } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

export interface SdkServer {
  baseUrl: string;
  rpcUrl: string;
  card: AgentCard;
  stop(): Promise<void>;
}

const now = (): string => new Date().toISOString();
const textOf = (parts: Part[]): string =>
  parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

class ReferenceExecutor implements AgentExecutor {
  private readonly waiting = new Map<string, () => void>();
  private readonly contexts = new Map<string, string>();

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = ctx;
    const text = textOf(ctx.userMessage.parts);
    if (text.startsWith('direct')) {
      bus.publish(
        AgentEvent.message(
          Message.fromJSON({
            messageId: randomUUID(),
            role: 'ROLE_AGENT',
            contextId,
            parts: [{ text: `Direct: ${text}` }],
          }),
        ),
      );
      return;
    }
    if (!ctx.task) {
      bus.publish(
        AgentEvent.task(
          Task.fromJSON({
            id: taskId,
            contextId,
            status: { state: 'TASK_STATE_SUBMITTED', timestamp: now() },
            history: [Message.toJSON(ctx.userMessage)],
          }),
        ),
      );
    }
    bus.publish(
      AgentEvent.statusUpdate(
        TaskStatusUpdateEvent.fromJSON({
          taskId,
          contextId,
          status: { state: 'TASK_STATE_WORKING', timestamp: now() },
        }),
      ),
    );
    if (text.startsWith('slow')) {
      this.contexts.set(taskId, contextId);
      await new Promise<void>((resolve) => this.waiting.set(taskId, resolve));
      return;
    }
    bus.publish(
      AgentEvent.artifactUpdate(
        TaskArtifactUpdateEvent.fromJSON({
          taskId,
          contextId,
          artifact: { artifactId: 'result', name: 'result', parts: [{ text: `Echo: ${text}` }] },
          lastChunk: true,
        }),
      ),
    );
    bus.publish(
      AgentEvent.statusUpdate(
        TaskStatusUpdateEvent.fromJSON({
          taskId,
          contextId,
          status: {
            state: 'TASK_STATE_COMPLETED',
            timestamp: now(),
            message: { messageId: randomUUID(), role: 'ROLE_AGENT', taskId, contextId, parts: [{ text: 'done' }] },
          },
        }),
      ),
    );
  }

  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    const resume = this.waiting.get(taskId);
    this.waiting.delete(taskId);
    const contextId = this.contexts.get(taskId) ?? '';
    this.contexts.delete(taskId);
    bus.publish(
      AgentEvent.statusUpdate(
        TaskStatusUpdateEvent.fromJSON({
          taskId,
          contextId,
          status: { state: 'TASK_STATE_CANCELED', timestamp: now() },
        }),
      ),
    );
    resume?.();
  }

  /** Lets the executions still waiting finish (so the server can close). */
  releaseAll(): void {
    for (const resume of this.waiting.values()) resume();
    this.waiting.clear();
  }
}

/** Starts the reference server on 127.0.0.1, port chosen by the OS. */
export async function startSdkServer(): Promise<SdkServer> {
  const app = express();
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const rpcUrl = `${baseUrl}/a2a`;
  const card = AgentCard.fromJSON({
    name: 'SDK reference agent',
    description: 'A plain @a2a-js/sdk server used by the CleverAgents interop tests.',
    version: '1.0.0',
    supportedInterfaces: [{ url: rpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true, pushNotifications: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Echoes the message back as an artifact.', tags: ['echo'] }],
  });
  const executor = new ReferenceExecutor();
  const handler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    executor,
    undefined,
    new InMemoryPushNotificationStore(),
  );
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use('/a2a', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));

  return {
    baseUrl,
    rpcUrl,
    card,
    stop: async () => {
      executor.releaseAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
