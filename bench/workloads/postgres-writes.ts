/**
 * The round trips a blocking SendMessage (echo actor) makes to PostgreSQL, and which statements
 * they are (issue #40, point 7: "at most three round trips that write"). The server is built here,
 * in this process, from the sources exactly as `agents serve` builds it (src/main/app.ts), so
 * that `pg.Client#query` can be counted (../lib/pg-statements.ts); messages are sent one at a
 * time over HTTP, and the statements of the whole window are divided by their number.
 */
import type { BenchConfig } from '../lib/config.ts';
import { PgStatementCounter, type StatementTally } from '../lib/pg-statements.ts';
import type { Report } from '../lib/report.ts';
import { tempDir } from '../lib/servers.ts';
import { BENCH_TOKEN, SEND_TEXT } from '../servers/workload.ts';
import { checkEchoTask } from '../lib/a2a.ts';
import { buildApp, createLogger } from '../../src/main/app.ts';
import { FacadeAuthenticator } from '../../src/protocol/server/auth.ts';
import { A2aHttpServer } from '../../src/protocol/server/http.server.ts';

/** The row's name: the target of ≤ 3 writing round trips judges it (bench/lib/targets.ts). */
export const WRITES_ROW = 'SendMessage on PostgreSQL, statements per message';

export async function postgresWrites(
  cfg: BenchConfig,
  report: Report,
  log: (s: string) => void,
  databaseUrl: string,
): Promise<void> {
  const counter = new PgStatementCounter();
  const logger = createLogger('warn');
  const app = await buildApp({
    dataDir: tempDir('pg-writes'),
    logger,
    databaseUrl,
    defaultActor: 'builtin/echo',
    card: { endpoint: 'http://127.0.0.1/a2a', auth: 'bearer' },
  });
  let server: A2aHttpServer | undefined;
  try {
    await app.facade.users.ensureServerToken(BENCH_TOKEN);
    server = new A2aHttpServer({
      dispatcher: app.dispatcher,
      card: app.card,
      auth: new FacadeAuthenticator(app.facade.authentication),
      logger,
    });
    const { port } = await server.listen(0, '127.0.0.1');
    const send = async (): Promise<void> => {
      const res = await fetch(`http://127.0.0.1:${port}/a2a`, {
        method: 'POST',
        headers: { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: SEND_TEXT }] } },
        }),
      });
      const body = (await res.json()) as { result?: { task?: Parameters<typeof checkEchoTask>[0] } };
      checkEchoTask(body.result?.task ?? {}, SEND_TEXT, 'SendMessage');
    };
    // The first messages make what is made once (the caller's namespace, a key's last use).
    for (let i = 0; i < 20; i++) await send();
    const n = cfg.quick ? 100 : 300;
    counter.start();
    for (let i = 0; i < n; i++) await send();
    // What the last turn writes after its answer (the runner's release) lands in the window too.
    await new Promise((r) => setTimeout(r, 200));
    const tally = counter.stop();
    record(report, log, tally, n);
  } finally {
    counter.restore();
    await server?.close(2_000);
    await app.close();
  }
}

function record(report: Report, log: (s: string) => void, t: StatementTally, n: number): void {
  const per = (x: number): number => x / n;
  log(
    `per blocking SendMessage: ${per(t.roundTrips).toFixed(2)} round trips, ${per(t.writingRoundTrips).toFixed(2)} that write, ` +
      `${per(t.writingTransactions).toFixed(2)} writing transactions (${n} messages, one at a time)`,
  );
  const shapes = [...t.shapes.entries()].sort((a, b) => b[1].n - a[1].n);
  for (const [sql, s] of shapes)
    log(`  ${per(s.n).toFixed(2)}× ${s.writes ? 'W' : 'r'} ${sql.length > 160 ? `${sql.slice(0, 157)}...` : sql}`);
  const row = (metric: string, value: number): void =>
    void report.add({ workload: WRITES_ROW, metric, unit: 'per message', ours: value });
  row('round trips that write (blocking, echo)', per(t.writingRoundTrips));
  row('writing transactions (blocking, echo)', per(t.writingTransactions));
  row('round trips in all (blocking, echo)', per(t.roundTrips));
}
