/**
 * `agents acp`: an Agent Client Protocol agent on stdio (Zed, JetBrains, …) in front of the A2A
 * backend. stdout carries ACP frames only; everything else goes to stderr.
 */
import { Readable, Writable } from 'node:stream';
import { agent, methods, ndJsonStream } from '@agentclientprotocol/sdk';
import { AcpBridge, type BridgeOptions } from './bridge.ts';

export type { SessionDefaults } from './workspace.ts';

export interface AcpIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
}

/** Serves ACP on `io` until the editor closes stdin (or `signal` aborts); the caller closes the backend. */
export async function runAcp(io: AcpIo, opts: BridgeOptions, signal: AbortSignal): Promise<void> {
  const bridge = new AcpBridge(opts);
  const app = agent({ name: 'cleveragents' })
    .onRequest(methods.agent.initialize, () => bridge.initialize())
    .onRequest(methods.agent.session.new, async ({ params, client }) => {
      const res = await bridge.newSession(params);
      afterResponse(() => bridge.announceCommands(res.sessionId, client));
      return res;
    })
    .onRequest(methods.agent.session.load, async ({ params, client }) => {
      await bridge.loadSession(params, client);
      afterResponse(() => bridge.announceCommands(params.sessionId, client));
      return {};
    })
    .onRequest(methods.agent.session.list, ({ params }) => bridge.listSessions(params))
    .onRequest(methods.agent.session.delete, ({ params }) => bridge.deleteSession(params.sessionId))
    .onRequest(methods.agent.session.prompt, ({ params, client, signal: s }) => bridge.prompt(params, client, s))
    .onNotification(methods.agent.session.cancel, ({ params }) => bridge.cancel(params.sessionId));
  const stream = ndJsonStream(
    Writable.toWeb(io.stdout as Writable) as WritableStream<Uint8Array>,
    Readable.toWeb(io.stdin as Readable) as ReadableStream<Uint8Array>,
  );
  const connection = app.connect(stream);
  const onAbort = (): void => connection.close();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await connection.closed;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Runs `send` once the response being returned is on its way (the editor knows the session then). */
function afterResponse(send: () => Promise<void>): void {
  setImmediate(() => void send().catch(() => undefined));
}
