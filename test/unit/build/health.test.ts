/**
 * `npm run health` counts what #38 measures. A small project written here has one case of each
 * shape the counter must find and one of each it must not (a comment, a string, a cast in the
 * wrong layer, a sleep whose length is data), so a counter that drifts to regexes or loses the type
 * checker fails here.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { type HealthReport, measureHealth, renderJson, renderTable } from '../../../build/health/report.ts';
import type { Measure } from '../../../build/health/measure.ts';
import { repoPath } from '../../support/paths.ts';

/** A function spanning exactly `lines` lines, first to last. */
function fnOf(name: string, lines: number): string {
  return [
    `export function ${name}(): number {`,
    '  let n = 0;',
    ...Array(lines - 4).fill('  n++;'),
    '  return n;',
    '}',
  ].join('\n');
}

const FILES: Record<string, string> = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      target: 'ES2022',
      strict: true,
      types: ['node'],
      allowImportingTsExtensions: true,
      noEmit: true,
    },
  }),
  'src/index.ts': "export * from './application/index.ts';\n",
  'src/application/index.ts': "export { PlanService } from './plans/plan.service.ts';\n",
  'src/domain/index.ts': "export type { Plan } from './plan/plan.ts';\n",
  'src/domain/plan/plan.ts': `export interface Plan {
  id: string;
  cursor: number;
  waiting?: { kind: string } | undefined;
  usage: { toolCalls: number };
}
/** The domain may change a plan: not counted. */
export function advance(p: Plan): void {
  p.cursor++;
  p.usage.toolCalls = 0;
}
`,
  'src/domain/errors.ts': 'export class AppError extends Error {}\n',
  'src/protocol/errors.ts': 'export const CODES = {};\n',
  'src/protocol/plan-views.ts': 'export const a = 1;\n',
  'src/protocol/wire/plan-views.ts': 'export const b = 1;\n',
  'src/application/plans/plan.service.ts': `import type { Plan } from '../../domain/plan/plan.ts';
import { advance } from '../../domain/plan/plan.ts';

interface Repo {
  get(id: string): Promise<Plan>;
  save(p: Plan): Promise<void>;
}
interface ToolDefinition { readOnly: boolean }

export class PlanService {
  private readonly repo: Repo;
  note = '';
  constructor(repo: Repo) {
    this.repo = repo;
  }
  get(id: string): Promise<Plan> {
    return this.repo.get(id);
  }
  async save(plan: Plan): Promise<void> {
    await this.repo.save(plan);
  }
  withTrim(id: string): Promise<Plan> {
    return this.repo.get(id.trim());
  }
  again(id: string): Promise<Plan> {
    return this.get(id);
  }
  private hidden(id: string): Promise<Plan> {
    return this.repo.get(id);
  }
  protected shielded(id: string): Promise<Plan> {
    return this.repo.get(id);
  }
  async reset(id: string): Promise<void> {
    const plan = await this.repo.get(id);
    plan.cursor = 0;
    plan.waiting = undefined;
    plan.usage.toolCalls++;
    const copy = { cursor: 1 };
    copy.cursor = 2;
    this.note = 'reset';
    advance(plan);
    await this.hidden(id);
    await this.shielded(id);
  }
  readOnly(entry: { definition: unknown }, definition: unknown): boolean {
    // a definition as given is not a cast
    const a = entry.definition as ToolDefinition;
    const b = definition as ToolDefinition;
    const c = (entry.definition as unknown as Record<string, boolean>)['readOnly'];
    const d = { definition: 1 } as const;
    return a.readOnly && b.readOnly && c === true && d.definition === 1;
  }
}

export function failed(err: unknown, e: unknown): string {
  return (err as Error).message + (e as Error).message + String((err as Error).stack);
}
`,
  'src/presentation/render.ts': `interface ToolDefinition { readOnly: boolean }
export const ro = (definition: unknown): boolean => (definition as ToolDefinition).readOnly;
export const asError = (x: unknown): Error => x as Error;
${fnOf('sixtyOne', 61)}
${fnOf('eightyOne', 81)}
export const table = {
  ${fnOf('inner', 60).replace('export function inner', 'inner').replace(/\n/g, '\n  ')},
};
`,
  'src/infrastructure/big.ts': Array.from({ length: 401 }, (_, i) => `export const v${i} = ${i};`).join('\n') + '\n',
  'src/infrastructure/exact.ts': Array.from({ length: 400 }, (_, i) => `export const w${i} = ${i};`).join('\n') + '\n',
  'test/e2e/own.test.ts': `function run(args: string[]): string[] {
  return args;
}
const json = async (args: string[]): Promise<unknown> => JSON.parse(run(args).join(''));
void json;
`,
  'test/e2e/borrowed.test.ts': `const script = 'function run(a) { return a; }';
async function go(): Promise<void> {
  const run = await Promise.resolve(script);
  void run;
}
void go;
`,
  'test/e2e/plain.test.ts': 'export {};\n',
  'test/e2e/support.ts': 'export function run(): void {}\n',
  'test/support/sleep.ts': `export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
`,
  'test/unit/waits.test.ts': `import { setTimeout as delay } from 'node:timers/promises';
import { sleep } from '../support/sleep.ts';

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const wait = async (ms: number): Promise<number> => ms;
const waiters: Array<() => void> = [];

export async function cases(ready: () => boolean, latency: number, work: Promise<void>): Promise<void> {
  await new Promise((r) => setTimeout(r, 50));
  while (!ready()) await delay(20);
  for (;;) {
    if (ready()) break;
    await sleep(10);
  }
  await pause(30);
  await pause(latency);
  await wait(5);
  await Promise.race([work, new Promise((r) => setTimeout(r, 1000))]);
  await new Promise<void>((r) => {
    waiters.push(r);
    setTimeout(r, 50);
  });
  for (const _ of [1]) await new Promise((r) => setTimeout(r, 5));
}
`,
  'test/unit/support/fixtures/poll.ts': `export async function poll(ready: () => boolean): Promise<void> {
  do await new Promise((r) => setTimeout(r, 25));
  while (!ready());
}
`,
  'test/unit/application/io.test.ts':
    "import { readFileSync } from 'node:fs';\nimport { buildApp } from '../../../src/main/app.ts';\n",
  'test/unit/application/pure.test.ts': "import { plan } from '../../../src/domain/plan.ts';\n",
  'test/fixtures/project/slow.test.ts': 'await new Promise((r) => setTimeout(r, 5000));\n',
};

let root = '';
let report: HealthReport;
const measure = (id: string): Measure => {
  const m = report.measures.find((x) => x.id === id);
  assert.ok(m, `no measure ${id}`);
  return m;
};
const places = (id: string): string[] => measure(id).findings.map((f) => `${f.file}:${f.line ?? ''}`);
const whats = (id: string): string[] => measure(id).findings.map((f) => f.what);

describe('npm run health', () => {
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'ca-health-'));
    for (const [path, text] of Object.entries(FILES)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    // node's own types, so that `node:timers/promises` resolves as it does in the repository.
    symlinkSync(repoPath('node_modules'), join(root, 'node_modules'));
    report = measureHealth(root);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('lists source files over 400 lines, not one of exactly 400 and not tests', () => {
    assert.deepEqual(places('files-over-400'), ['src/infrastructure/big.ts:']);
    assert.equal(measure('files-over-400').findings[0]?.lines, 401);
  });

  it('lists functions over 60 and over 80 lines, longest first, with their names', () => {
    assert.deepEqual(
      measure('functions-over-60').findings.map((f) => [f.what, f.lines]),
      [
        ['eightyOne', 81],
        ['sixtyOne', 61],
      ],
    );
    assert.deepEqual(whats('functions-over-80'), ['eightyOne']);
    assert.match(places('functions-over-60')[0] ?? '', /^src\/presentation\/render\.ts:\d+$/);
  });

  it('counts public methods that only hand their own parameters to a field, out of all public methods', () => {
    assert.deepEqual(whats('forwarders'), ['PlanService.get', 'PlanService.save']);
    assert.equal(measure('forwarders').outOf, 6);
  });

  it('finds assignments to a plan typed Plan by the checker, outside the domain only', () => {
    assert.deepEqual(whats('plan-assignments'), ['plan.cursor = 0', 'plan.waiting = undefined']);
    assert.deepEqual(whats('plan-deep-assignments'), ['plan.usage.toolCalls++']);
  });

  it('counts (x as Error).message in src, whatever x is called, and no other use of the cast', () => {
    assert.deepEqual(whats('error-message-casts'), ['(err as Error).message', '(e as Error).message']);
  });

  it('counts definition casts in application code once each, not `as const`, comments or other layers', () => {
    assert.deepEqual(whats('definition-casts'), [
      'entry.definition as ToolDefinition',
      'definition as ToolDefinition',
      'entry.definition as unknown',
    ]);
  });

  it('names file names found in more than one layer, not barrels and not twice in one layer', () => {
    assert.deepEqual(whats('duplicate-basenames'), ['src/domain/errors.ts, src/protocol/errors.ts']);
    assert.deepEqual(places('duplicate-basenames'), ['errors.ts:']);
  });

  it('finds end-to-end test files that define their own run or json, out of all of them', () => {
    assert.deepEqual(places('e2e-own-helpers'), ['test/e2e/own.test.ts:1']);
    assert.deepEqual(whats('e2e-own-helpers'), ['run(, json(']);
    assert.equal(measure('e2e-own-helpers').outOf, 3);
  });

  it('finds unit tests of the application and the domain that import I/O, out of all of them', () => {
    assert.deepEqual(places('unit-tests-with-io'), ['test/unit/application/io.test.ts:']);
    assert.deepEqual(whats('unit-tests-with-io'), ['node:fs, ../../../src/main/app.ts']);
    assert.equal(measure('unit-tests-with-io').outOf, 2);
  });

  it('finds awaited fixed sleeps however they are spelled, and tells polls from single waits', () => {
    const sleeps = measure('fixed-sleeps');
    assert.deepEqual(
      sleeps.findings.map((f) => `${f.file}:${f.line} ${f.what.split(':')[0]}`),
      [
        'test/unit/support/fixtures/poll.ts:2 poll',
        'test/unit/waits.test.ts:9 once',
        'test/unit/waits.test.ts:10 poll',
        'test/unit/waits.test.ts:13 poll',
        'test/unit/waits.test.ts:15 once',
        'test/unit/waits.test.ts:23 once',
      ],
    );
    assert.equal(sleeps.note, '3 in polling loops');
  });

  it('prints a table with every measure and each list once, and the same counts as JSON', () => {
    const table = renderTable(report);
    for (const m of report.measures) assert.match(table, new RegExp(`^${escape(m.title)} +${m.count}`, 'm'));
    assert.match(table, /^End-to-end test files with their own run\(\/json\( +1 of 3$/m);
    assert.match(table, /the first 1 of "Functions over 60 lines" above/);
    const json = JSON.parse(renderJson(report)) as { measures: Measure[] };
    assert.deepEqual(
      json.measures.map((m) => [m.id, m.count]),
      report.measures.map((m) => [m.id, m.count]),
    );
  });

  it('refuses an unknown format with the usage and exit code 2, and prints JSON when asked', async () => {
    const run = promisify(execFile);
    const script = repoPath('build/health.ts');
    await assert.rejects(
      run(process.execPath, [script, '--format', 'xml']),
      (err: { code?: number; stderr?: string }) => {
        assert.equal(err.code, 2);
        assert.match(err.stderr ?? '', /--format must be table or json, not "xml"\nusage: node build\/health\.ts/);
        return true;
      },
    );
    const { stdout } = await run(process.execPath, [script, '--root', root, '--format', 'json']);
    const parsed = JSON.parse(stdout) as { measures: Measure[] };
    assert.equal(parsed.measures.find((m) => m.id === 'forwarders')?.count, 2);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
