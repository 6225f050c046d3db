/**
 * Stored tasks for the scale workload, written straight into the SQLite file: the schema comes
 * from our migrations (openDatabase), the rows from one bulk insert per table — the API would take
 * minutes for a million tasks. Files are cached per schema version and size and reused across
 * rounds and runs.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { ulid } from 'ulid';
import { backfillTaskCounts, MIGRATIONS, openDatabase } from '../../src/infrastructure/index.ts';
import { databaseFile } from '../../src/main/paths.ts';
import { SEND_TEXT } from '../servers/workload.ts';

export interface Seeded {
  dataDir: string;
  count: number;
  /** Ids spread over the whole table, for GetTask. */
  sampleIds: string[];
  /** A ListTasks position 90% of the way down, and the id that must come right after it. */
  deep: { updatedAt: string; id: string; nextId: string };
  seededNow: boolean;
  seedMs: number;
}

const OWNER = 'local';
const TASKS_PER_CONTEXT = 10;
const BASE_MS = Date.parse('2025-01-01T00:00:00.000Z');

const schemaTag = (): string =>
  createHash('sha256').update(Object.keys(MIGRATIONS).join(',')).digest('hex').slice(0, 12);

export function seedRoot(): string {
  return join(tmpdir(), 'cleveragents-bench-seed', schemaTag());
}

/** A completed builtin/echo task, as our server stores it. */
function snapshot(id: string, contextId: string, at: string): string {
  return JSON.stringify({
    id,
    contextId,
    status: { state: 'TASK_STATE_COMPLETED', timestamp: at },
    history: [{ messageId: `m-${id}`, role: 'ROLE_USER', parts: [{ text: SEND_TEXT }], contextId, taskId: id }],
    artifacts: [
      {
        artifactId: 'response',
        name: 'response',
        parts: [
          { text: 'You said: Hello agent, ' },
          { text: 'please restate this ' },
          { text: 'short benchmark ' },
          { text: 'message.' },
        ],
      },
    ],
  });
}

/** How many tasks a seeded file holds (fewer after a server swept it); -1 when it cannot be read. */
function storedTasks(file: string): number {
  try {
    const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
    try {
      return (db.prepare('select count(*) as n from tasks').get() as { n: number }).n;
    } finally {
      db.close();
    }
  } catch {
    return -1;
  }
}

export async function seed(count: number, log: (s: string) => void): Promise<Seeded> {
  const dir = join(seedRoot(), `tasks-${count}`);
  const metaFile = join(dir, 'seed.json');
  if (existsSync(metaFile)) {
    const stored = storedTasks(databaseFile(dir));
    if (stored === count) {
      return {
        ...(JSON.parse(readFileSync(metaFile, 'utf8')) as Omit<Seeded, 'seededNow' | 'seedMs'>),
        seededNow: false,
        seedMs: 0,
      };
    }
    log(
      stored < 0
        ? `the cached seed in ${dir} cannot be read`
        : `the cached seed in ${dir} holds ${stored.toLocaleString('en-US')} tasks, not ${count.toLocaleString('en-US')}`,
    );
  }
  const t0 = performance.now();
  log(`seeding ${count.toLocaleString('en-US')} tasks into ${dir} (once; reused by later runs)`);
  const building = `${dir}.building`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  const file = databaseFile(building);
  // The schema, exactly as the server creates it.
  await (await openDatabase({ file })).close();

  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  const insertTask = db.prepare(
    'insert into tasks (id, context_id, owner, state, created_at, updated_at, seq, snapshot) values (?, ?, ?, ?, ?, ?, 5, ?)',
  );
  const insertSession = db.prepare(
    "insert into sessions (id, owner, actor, title, created_at, updated_at, task_count) values (?, ?, 'builtin/echo', null, ?, ?, ?)",
  );
  const sampleEvery = Math.max(1, Math.floor(count / 1000));
  const sampleIds: string[] = [];
  const batch = db.transaction((from: number, to: number) => {
    let contextId = '';
    for (let i = from; i < to; i++) {
      const ms = BASE_MS + i * 1000;
      const at = new Date(ms).toISOString();
      if (i % TASKS_PER_CONTEXT === 0) {
        contextId = ulid(ms);
        const last = new Date(ms + (TASKS_PER_CONTEXT - 1) * 1000).toISOString();
        insertSession.run(contextId, OWNER, at, last, Math.min(TASKS_PER_CONTEXT, count - i));
      }
      const id = ulid(ms);
      insertTask.run(id, contextId, OWNER, 'TASK_STATE_COMPLETED', at, at, snapshot(id, contextId, at));
      if (i % sampleEvery === 0) sampleIds.push(id);
    }
  });
  const STEP = 50_000;
  for (let from = 0; from < count; from += STEP) {
    batch(from, Math.min(count, from + STEP));
    if (count >= 500_000 && from % 200_000 === 0 && from > 0) log(`  … ${from.toLocaleString('en-US')}`);
  }
  // 90% of the way down the newest-first listing.
  const depth = Math.floor(count * 0.9);
  const rows = db
    .prepare('select id, updated_at from tasks where owner = ? order by updated_at desc, id desc limit 2 offset ?')
    .all(OWNER, depth) as Array<{ id: string; updated_at: string }>;
  const [at, next] = rows;
  if (!at || !next) throw new Error('seed: the table is too small for a deep page');
  db.pragma('journal_mode = WAL');
  db.exec('analyze');
  db.close();
  // What the repository keeps alongside the rows (the maintained task counts).
  const opened = await openDatabase({ file });
  await backfillTaskCounts(opened.kysely);
  await opened.close();

  const meta = { dataDir: dir, count, sampleIds, deep: { updatedAt: at.updated_at, id: at.id, nextId: next.id } };
  writeFileSync(join(building, 'seed.json'), JSON.stringify(meta));
  rmSync(dir, { recursive: true, force: true });
  renameSync(building, dir);
  const seedMs = performance.now() - t0;
  log(`  seeded in ${(seedMs / 1000).toFixed(1)} s`);
  return { ...meta, seededNow: true, seedMs };
}
