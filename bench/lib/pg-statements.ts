/**
 * Counts the statements this process sends to PostgreSQL, by wrapping `pg.Client#query` (every
 * pooled connection, and the listener, is a `pg.Client`; Kysely sends each statement, `begin` and
 * `commit` included, as one `query` call, which is one round trip). Only a server running in this
 * process is seen: the bench builds one from the sources for the count (see postgres-writes.ts).
 */
import pg from 'pg';

/** What was counted, per statement shape (the SQL with its whitespace collapsed). */
export interface StatementTally {
  /** Every statement (one round trip each). */
  roundTrips: number;
  /** Statements that change data, and `begin`/`commit` of transactions that do. */
  writingRoundTrips: number;
  /** Transactions that change data: an explicit one, or a statement on its own (autocommit). */
  writingTransactions: number;
  shapes: Map<string, { n: number; writes: boolean }>;
}

/** A data-changing statement: INSERT/UPDATE/DELETE (in a CTE too), SELECT … FOR UPDATE, NOTIFY. */
const WRITES =
  /^\s*(insert|update|delete)\b|^\s*with\b[\s\S]*\b(insert\s+into|update\s+\S+\s+set|delete\s+from)\b|\bfor\s+update\b|\bpg_notify\s*\(/i;
const BEGIN = /^\s*(begin|start\s+transaction)\b/i;
const END = /^\s*(commit|rollback)\b/i;

/** Tallies statements as each connection sends them (what {@link PgStatementCounter} sees). */
export class StatementTallier {
  readonly tally: StatementTally = { roundTrips: 0, writingRoundTrips: 0, writingTransactions: 0, shapes: new Map() };
  /** Per connection, the open transaction: its round trips so far, and whether it wrote. */
  private readonly open = new WeakMap<object, { trips: number; writes: boolean }>();

  seen(client: object, text: string): void {
    const t = this.tally;
    t.roundTrips++;
    const shape = text.replace(/\s+/g, ' ').trim();
    const writes = WRITES.test(text);
    const s = t.shapes.get(shape) ?? { n: 0, writes };
    s.n++;
    t.shapes.set(shape, s);
    if (BEGIN.test(text)) {
      this.open.set(client, { trips: 1, writes: false });
      return;
    }
    const tx = this.open.get(client);
    if (tx && END.test(text)) {
      this.open.delete(client);
      if (tx.writes) {
        t.writingTransactions++;
        t.writingRoundTrips += tx.trips + 1;
      }
      return;
    }
    if (tx) {
      tx.trips++;
      tx.writes ||= writes;
    } else if (writes) {
      t.writingTransactions++;
      t.writingRoundTrips++;
    }
  }
}

/** Wraps `pg.Client#query` (for every client of this process) until {@link restore}. */
export class PgStatementCounter {
  private tallier: StatementTallier | undefined;
  private readonly original: typeof pg.Client.prototype.query;

  constructor() {
    // Kept to be put back as it was and called with each client as `this`.
    // eslint-disable-next-line @typescript-eslint/unbound-method
    const original = pg.Client.prototype.query;
    this.original = original;
    const seen = (client: object, text: string): void => this.tallier?.seen(client, text);
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      seen(this, textOf(args[0]));
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof pg.Client.prototype.query;
  }

  /** Starts a fresh count. */
  start(): void {
    this.tallier = new StatementTallier();
  }

  /** Ends the count and returns it. */
  stop(): StatementTally {
    const tally = this.tallier?.tally;
    this.tallier = undefined;
    if (!tally) throw new Error('bench: the statement count was stopped before it started');
    return tally;
  }

  /** Puts `pg.Client#query` back. */
  restore(): void {
    pg.Client.prototype.query = this.original;
  }
}

function textOf(arg: unknown): string {
  if (typeof arg === 'string') return arg;
  const text = (arg as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? text : '(not SQL text)';
}
