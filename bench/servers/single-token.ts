/**
 * The baseline of the auth workload: our HTTP server as it authenticated before accounts existed —
 * one shared token, compared in constant time in memory, standing for the admin. The app is built
 * exactly as `agents serve` builds it (src/main/app.ts); only the authenticator differs, so the
 * difference the workload measures is what API keys and JWTs cost.
 *
 * Usage: node single-token.js <dataDir> <token>  → prints `listening on 127.0.0.1:<port>`.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import { LOCAL_PRINCIPAL, type Principal } from '../../src/application/index.ts';
import { AppError } from '../../src/domain/errors.ts';
import { buildApp, createLogger } from '../../src/main/app.ts';
import type { Authenticator, Credentials } from '../../src/protocol/server/auth.ts';
import { A2aHttpServer } from '../../src/protocol/server/http.server.ts';

const [dataDir, token] = process.argv.slice(2) as [string, string];
const digest = (s: string): Buffer => hash('sha256', s, 'buffer');

class SingleTokenAuthenticator implements Authenticator {
  private readonly expected = digest(token);
  private readonly principal: Principal = { ...LOCAL_PRINCIPAL, kind: 'key' };

  authenticate({ authorization }: Credentials): Promise<Principal> {
    const m = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (!m || !timingSafeEqual(digest(m[1] ?? ''), this.expected))
      return Promise.reject(new AppError('UNAUTHENTICATED', 'Authentication failed'));
    return Promise.resolve(this.principal);
  }
}

const logger = createLogger('info');
const app = await buildApp({ dataDir, logger, card: { endpoint: 'http://127.0.0.1/a2a', auth: 'bearer' } });
const server = new A2aHttpServer({
  dispatcher: app.dispatcher,
  card: app.card,
  auth: new SingleTokenAuthenticator(),
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
