/**
 * Our HTTP server running the bench streaming actor, for the streaming workload. No shipped actor
 * emits n artifact events, so this launcher builds the app exactly as `agents serve` does
 * (src/main/app.ts: same classes, same SQLite storage, same logger) and then puts the bench actor
 * in place of model `echo` — it answers ordinary messages exactly as echo does, and `stream:<n>`
 * with n chunks. Everything else the bench measures runs `agents serve` itself.
 *
 * Usage: node ours-stream.js <dataDir> <token>  → prints `listening on 127.0.0.1:<port>`.
 */
import type { Actor } from '../../src/application/index.ts';
import { buildApp, createLogger } from '../../src/main/app.ts';
import { FacadeAuthenticator } from '../../src/protocol/server/auth.ts';
import { A2aHttpServer } from '../../src/protocol/server/http.server.ts';
import { BenchStreamActor } from './bench-stream.actor.ts';

const [dataDir, token] = process.argv.slice(2) as [string, string];
const logger = createLogger('info');
const app = await buildApp({
  dataDir,
  logger,
  // The postgres workload runs it on PostgreSQL too (and as two instances of one database).
  databaseUrl: process.env['CLEVERAGENTS_DATABASE_URL'] || undefined,
  defaultActor: 'builtin/echo',
  card: { endpoint: 'http://127.0.0.1/a2a', auth: 'bearer' },
});
// The catalog resolves `provider: builtin` actors through its model map (registry-actor.catalog.ts);
// replacing `echo` there is the one seam that does not need a change to the composition root.
const byModel = (app.facade.actors as unknown as { byModel?: unknown }).byModel;
if (!(byModel instanceof Map) || !byModel.has('echo')) {
  throw new Error('bench: the actor catalog no longer keeps a `byModel` map; update bench/servers/ours-stream.ts');
}
(byModel as Map<string, Actor>).set('echo', new BenchStreamActor());

// As `agents serve` does: the token is the administrator's key.
await app.facade.users.ensureServerToken(token);
const server = new A2aHttpServer({
  dispatcher: app.dispatcher,
  card: app.card,
  auth: new FacadeAuthenticator(app.facade.authentication),
  logger,
});
const addr = await server.listen(0, '127.0.0.1');
process.stderr.write(`listening on 127.0.0.1:${addr.port}\n`);
process.once('SIGTERM', () => {
  void server
    .close(2_000)
    .then(() => app.close())
    .finally(() => process.exit(0));
});
