/**
 * The agent in this process for application tests: SQLite in memory, no network, results checked
 * against their schemas, and A2A clients over the in-memory transport as the local user or bob
 * (the owner of his own namespace only).
 */
import { rmSync } from 'node:fs';
import { LOCAL_PRINCIPAL, makePrincipal, type Principal } from '../../src/application/index.ts';
import { buildApp, type App } from '../../src/main/app.ts';
import { A2AClient } from '../../src/protocol/client/index.ts';
import { InMemoryClientTransport } from '../../src/protocol/server/in-memory.transport.ts';
import { tempDir } from './harness.ts';

/** Another user, owner of their own namespace only. */
export const BOB: Principal = makePrincipal({ id: 'bob', roles: { bob: 'owner' } });

/** An actor of the local namespace whose definition names a key: what another namespace must not use. */
export const SECRETIVE_ACTOR = {
  name: 'local/secretive',
  provider: 'openai-compatible',
  model: 'm',
  baseUrl: 'http://127.0.0.1:9/v1',
  apiKeyEnv: 'SOME_KEY',
} as const;

export interface MemoryApp {
  app: App;
  /** Its data directory (a temporary one). */
  dir: string;
  /** The local user's client. */
  client: A2AClient;
  /** bob's client. */
  bob: A2AClient;
  clientAs(principal: Principal): A2AClient;
  close(): Promise<void>;
}

export async function memoryApp(prefix: string): Promise<MemoryApp> {
  const dir = tempDir(prefix);
  const app = await buildApp({
    dataDir: dir,
    inMemory: true,
    validateResults: true,
    card: { endpoint: 'memory://', auth: 'none' },
  });
  const card = () => app.card.publicCard('1.0').card;
  const clientAs = (principal: Principal): A2AClient =>
    new A2AClient(new InMemoryClientTransport(app.dispatcher, card, principal, '1.0'));
  return {
    app,
    dir,
    client: clientAs(LOCAL_PRINCIPAL),
    bob: clientAs(BOB),
    clientAs,
    async close() {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
