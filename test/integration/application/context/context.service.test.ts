/**
 * ContextService with a real inventory on a temporary git repository and a real RegistryService:
 * which files are in the context and why, which limit cut what, show's sources, set with
 * revisions, and a foreign or missing project looking the same.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LOCAL_PRINCIPAL, type FileInventory } from '../../../../src/application/index.ts';
import { ContextService, type ContextPlan } from '../../../../src/application/context/context.service.ts';
import type { ContextInspection } from '../../../../src/application/context/context.types.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import { FsFileInventory } from '../../../../src/infrastructure/index.ts';
import { initRepo } from '../../../support/git.ts';
import { recordingInventory, registryWith, wordTokens } from './support.ts';

const FILES = {
  '.gitignore': 'dist/\n*.log\n',
  'src/date/parse-date.ts':
    "import { pad } from './pad.js';\n// parse a date string\nexport function parseDate(s: string) { return pad(s); }\n",
  'src/date/pad.ts': "export const pad = (s: string) => s.padStart(2, '0');\n",
  'src/server.ts': 'export const port = 8080;\n',
  'test/parse-date.test.ts': "import { parseDate } from '../src/date/parse-date.js';\n// test parsing\n",
  'assets/logo.png': '\0PNG',
  'data/big.json': 'x'.repeat(3000),
  'vendor/lib.js': 'lib\n',
  'dist/out.js': 'ignored\n',
  'debug.log': 'ignored\n',
};
const CONTEXT = { exclude: ['vendor/**'], maxFileSize: 2000 };
const GOAL = 'fix the failing date parsing test';

let dir: string;
let repo: string;
let git: (...args: string[]) => string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'ca-context-'));
  repo = join(dir, 'api');
  git = initRepo(repo, FILES);
  writeFileSync(join(repo, 'src/server.ts'), 'export const port = 8081;\n');
  git('commit', '-qam', 'port');
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function service(
  context: Record<string, unknown> | undefined = CONTEXT,
  extra: { inventory?: FileInventory; plans?: { get(id: string): Promise<ContextPlan> } } = {},
) {
  const { registry } = await registryWith(repo, context);
  const svc = new ContextService({
    registry,
    inventory: extra.inventory ?? new FsFileInventory(),
    tokens: wordTokens,
    ...(extra.plans
      ? { plans: { get: (id: string) => (extra.plans as { get(id: string): Promise<ContextPlan> }).get(id) } }
      : {}),
  });
  return { svc, registry };
}

const summary = (c: ContextInspection): Array<[string, boolean, string | undefined]> =>
  c.files.map((f) => [f.path, f.included, f.excludedBy]);
const notFound = (e: unknown): boolean =>
  e instanceof AppError &&
  e.reason === 'NOT_FOUND' &&
  e.message === 'No project named ' + (e.details['name'] as string);

describe('ContextService.inspect', () => {
  it('ranks by goal terms in paths and text, references and recency, and says which limit cut each file', async () => {
    const { svc } = await service();
    const c = await svc.inspect({ project: 'local/api', goal: GOAL, budget: 1000 }, LOCAL_PRINCIPAL);
    assert.deepEqual(summary(c), [
      ['test/parse-date.test.ts', true, undefined],
      ['src/date/parse-date.ts', true, undefined],
      ['src/date/pad.ts', true, undefined],
      ['src/server.ts', true, undefined],
      ['.gitignore', true, undefined],
      ['assets/logo.png', false, 'binary'],
      ['data/big.json', false, 'max-file-size'],
    ]);
    assert.deepEqual(c.cut, { 'excluded-glob': 1, binary: 1, 'max-file-size': 1 });
    const bytes = (...ps: Array<keyof typeof FILES>): number => ps.reduce((n, p) => n + Buffer.byteLength(FILES[p]), 0);
    const included = bytes(
      'test/parse-date.test.ts',
      'src/date/parse-date.ts',
      'src/date/pad.ts',
      'src/server.ts',
      '.gitignore',
    );
    assert.deepEqual(c.totals, {
      included: 5,
      includedTokens: 9 + 19 + 9 + 5 + 2,
      includedBytes: included,
      excluded: 3,
    });
    const listed = (Object.keys(FILES) as Array<keyof typeof FILES>).filter(
      (p) => p !== 'dist/out.js' && p !== 'debug.log',
    );
    assert.deepEqual(
      c.inventory,
      [{ resource: 'local/api', files: 8, bytes: bytes(...listed) }],
      '.gitignore honoured',
    );
    assert.deepEqual(c.budget, {
      modelWindow: 8192,
      // The built-in reserves, each at most its share of the default 8192-token window.
      reserves: { system: 819, history: 2048, answer: 2048 },
      available: 1000,
      source: 'override',
      used: 44,
    });
    assert.equal(c.dryRun, false);
    const why = (p: string) =>
      c.files.find((f) => f.path === p)?.why.map((w) => `${w.strategy} ${w.score} ${w.reason}`);
    assert.deepEqual(why('src/date/parse-date.ts'), [
      "goal-match 3 goal term 'dat' in file name",
      "goal-match 3 goal term 'pars' in file name",
      'recency 1.99 changed 1 commit before the last',
      "goal-match 0.25 goal term 'dat' 1× in text",
      "goal-match 0.5 goal term 'pars' 2× in text",
      'references 1.5 named by test/parse-date.test.ts',
    ]);
    assert.deepEqual(why('src/date/pad.ts'), [
      "goal-match 1 goal term 'dat' in path",
      'recency 1.99 changed 1 commit before the last',
      'references 1.5 named by src/date/parse-date.ts',
    ]);
    assert.deepEqual(why('src/server.ts'), ['recency 2 changed in the last commit']);
    assert.equal(c.files.find((f) => f.path === 'src/date/parse-date.ts')?.score, 10.24);
    assert.equal(c.files.find((f) => f.path === 'src/date/parse-date.ts')?.tokens, 19);
  });

  it('cuts by max-files, keeping the best ranked', async () => {
    const { svc } = await service({ ...CONTEXT, maxFiles: 2 });
    const c = await svc.inspect({ project: 'local/api', goal: GOAL, budget: 1000 }, LOCAL_PRINCIPAL);
    assert.deepEqual(summary(c), [
      ['test/parse-date.test.ts', true, undefined],
      ['src/date/parse-date.ts', true, undefined],
      ['src/date/pad.ts', false, 'max-files'],
      ['src/server.ts', false, 'max-files'],
      ['.gitignore', false, 'max-files'],
      ['assets/logo.png', false, 'binary'],
      ['data/big.json', false, 'max-file-size'],
    ]);
    assert.deepEqual(c.cut, { 'excluded-glob': 1, 'max-files': 3, binary: 1, 'max-file-size': 1 });
  });

  it('fills the token budget greedily in rank order: a file that does not fit is skipped, a smaller one after it may fit', async () => {
    const { svc } = await service();
    const c = await svc.inspect({ project: 'local/api', goal: GOAL, budget: 20 }, LOCAL_PRINCIPAL);
    assert.deepEqual(summary(c), [
      ['test/parse-date.test.ts', true, undefined],
      ['src/date/pad.ts', true, undefined],
      ['.gitignore', true, undefined],
      ['src/date/parse-date.ts', false, 'token-budget'],
      ['src/server.ts', false, 'token-budget'],
      ['assets/logo.png', false, 'binary'],
      ['data/big.json', false, 'max-file-size'],
    ]);
    assert.equal(c.budget.used, 20);
    assert.equal(c.files.find((f) => f.path === 'src/date/parse-date.ts')?.tokens, 19, 'counted for real');
  });

  it('cuts by max-total-size, and takes the view budget and the window budget in that order', async () => {
    const maxTotalSize = Buffer.byteLength(FILES['test/parse-date.test.ts']) + Buffer.byteLength(FILES['.gitignore']);
    const { svc } = await service({ ...CONTEXT, maxTotalSize, tokenBudget: 300 });
    const c = await svc.inspect({ project: 'local/api', goal: GOAL }, LOCAL_PRINCIPAL);
    assert.deepEqual(
      c.files.filter((f) => f.included).map((f) => f.path),
      ['test/parse-date.test.ts', '.gitignore'],
    );
    assert.equal(c.cut['max-total-size'], 3);
    assert.deepEqual([c.budget.source, c.budget.available], ['view', 300]);
    const { svc: bare } = await service({ reserves: { history: 1000 } });
    const w = await bare.inspect({ project: 'local/api', goal: GOAL }, LOCAL_PRINCIPAL);
    assert.deepEqual([w.budget.source, w.budget.available], ['window', 8192 - 819 - 1000 - 2048]);
  });

  it('changes the snapshot when an included file changes, not otherwise', async () => {
    const { svc } = await service();
    const q = { project: 'local/api', goal: GOAL, budget: 1000 };
    const a = await svc.inspect(q, LOCAL_PRINCIPAL);
    const b = await svc.inspect(q, LOCAL_PRINCIPAL);
    assert.equal(a.snapshot, b.snapshot);
    assert.match(a.snapshot, /^sha256:[0-9a-f]{64}$/);
    const file = join(repo, 'src/server.ts');
    writeFileSync(file, 'export const port = 9090;\n'); // same size, an in-place edit
    try {
      const c = await svc.inspect(q, LOCAL_PRINCIPAL);
      assert.notEqual(c.snapshot, a.snapshot);
    } finally {
      git('checkout', '--', 'src/server.ts');
    }
  });

  it('takes a plan’s goal and decisions, and refuses a plan on another project', async () => {
    const plan: ContextPlan = {
      projects: ['local/api'],
      description: 'unused when there is a goal argument',
      arguments: { goal: 'the server port' },
      decisions: [
        { question: 'which file?', chosen: 'edit src/server.ts', rationale: 'it holds the port', superseded: false },
      ],
    };
    const { svc } = await service(CONTEXT, { plans: { get: () => Promise.resolve(plan) } });
    const c = await svc.inspect({ project: 'local/api', planId: 'P1', budget: 1000 }, LOCAL_PRINCIPAL);
    assert.equal(c.goal, 'the server port');
    assert.equal(c.planId, 'P1');
    const top = c.files[0];
    assert.equal(top?.path, 'src/server.ts');
    assert.ok(
      top?.why.some((w) => w.strategy === 'decisions' && w.reason === "path 'src/server.ts' named in a decision"),
    );
    const { svc: other } = await service(CONTEXT, {
      plans: { get: () => Promise.resolve({ ...plan, projects: ['local/web'] }) },
    });
    await assert.rejects(
      other.inspect({ project: 'local/api', planId: 'P1' }, LOCAL_PRINCIPAL),
      (e: unknown) => e instanceof AppError && e.reason === 'INVALID_PARAMS' && e.fields[0]?.field === 'planId',
    );
  });

  it('looks the same for a foreign project as for a missing one', async () => {
    const { svc } = await service();
    for (const project of ['team/secret', 'local/nope'])
      for (const call of [
        () => svc.inspect({ project, goal: GOAL }, LOCAL_PRINCIPAL),
        () => svc.simulate({ project, goal: GOAL }, LOCAL_PRINCIPAL),
        () => svc.show({ project }, LOCAL_PRINCIPAL),
        () => svc.set({ project, view: 'default', settings: { maxFiles: 3 } }, LOCAL_PRINCIPAL),
      ])
        await assert.rejects(call(), notFound);
  });
});

describe('ContextService.simulate and assemble', () => {
  it('simulate reads no file: tokens from sizes (4 bytes a token), binary by extension, no text ranking', async () => {
    const real = new FsFileInventory();
    let reads = 0;
    const inventory: FileInventory = {
      list: (r, s) => real.list(r, s),
      restat: (r, p) => real.restat(r, p),
      recency: (r) => real.recency(r),
      globFilter: (i, e) => real.globFilter(i, e),
      read: (r, p, m) => {
        reads++;
        return real.read(r, p, m);
      },
    };
    const { svc } = await service(CONTEXT, { inventory });
    const c = await svc.simulate({ project: 'local/api', goal: GOAL, budget: 1000 }, LOCAL_PRINCIPAL);
    assert.equal(reads, 0);
    assert.equal(c.dryRun, true);
    const parse = c.files.find((f) => f.path === 'src/date/parse-date.ts');
    assert.equal(parse?.tokens, Math.ceil(Buffer.byteLength(FILES['src/date/parse-date.ts']) / 4));
    assert.ok(parse?.why.every((w) => !w.reason.includes('in text') && w.strategy !== 'references'));
    assert.deepEqual(c.cut, { 'excluded-glob': 1, binary: 1, 'max-file-size': 1 });
  });

  it('assemble gives the included files’ text, in rank order, for the project’s actor window', async () => {
    const { svc } = await service({ ...CONTEXT, reserves: { system: 0, history: 0 } });
    const a = await svc.assemble({
      project: 'local/api',
      view: 'execute',
      goal: GOAL,
      modelWindow: 60,
      answerReserve: 30,
    });
    assert.deepEqual(a.budget, {
      modelWindow: 60,
      reserves: { system: 0, history: 0, answer: 30 },
      available: 30,
      source: 'window',
      used: 30,
    });
    assert.deepEqual(
      a.fragments.map((f) => [f.path, f.tokens]),
      [
        ['test/parse-date.test.ts', 9],
        ['src/date/parse-date.ts', 19],
        ['.gitignore', 2],
      ],
    );
    assert.deepEqual(
      a.files.filter((f) => !f.included).map((f) => [f.path, f.excludedBy]),
      [
        ['src/date/pad.ts', 'token-budget'],
        ['src/server.ts', 'token-budget'],
        ['assets/logo.png', 'binary'],
        ['data/big.json', 'max-file-size'],
      ],
    );
    assert.equal(a.fragments[0]?.text, FILES['test/parse-date.test.ts']);
    await assert.rejects(svc.assemble({ project: 'team/nope', view: 'execute', goal: '' }), notFound);
  });
});

describe('ContextService caches', () => {
  it('a second inspection of an unchanged tree reads and counts nothing again; an edited file is read again', async () => {
    const real = new FsFileInventory();
    const reads: string[] = [];
    const inventory = recordingInventory(real, reads);
    let counted = 0;
    const { registry } = await registryWith(repo, CONTEXT);
    const svc = new ContextService({
      registry,
      inventory,
      tokens: { count: (t) => ((counted += 1), wordTokens.count(t)) },
    });
    const q = { project: 'local/api', goal: GOAL, budget: 1000 };
    const first = await svc.inspect(q, LOCAL_PRINCIPAL);
    assert.equal(counted, 5, 'the five included files');
    assert.deepEqual(reads.sort(), [
      '.gitignore',
      'src/date/pad.ts',
      'src/date/parse-date.ts',
      'src/server.ts',
      'test/parse-date.test.ts',
    ]);
    reads.length = 0;
    counted = 0;
    const second = await svc.inspect(q, LOCAL_PRINCIPAL);
    assert.deepEqual([reads, counted], [[], 0]);
    assert.deepEqual(second, first);
    const file = join(repo, 'src/date/pad.ts');
    writeFileSync(file, 'export const pad = 1;\n');
    try {
      const third = await svc.inspect(q, LOCAL_PRINCIPAL);
      assert.deepEqual([reads, counted], [['src/date/pad.ts'], 1]);
      assert.equal(third.files.find((f) => f.path === 'src/date/pad.ts')?.tokens, 5);
    } finally {
      git('checkout', '--', 'src/date/pad.ts');
    }
  });

  it('assemble stops with the abort reason when its signal is aborted', async () => {
    const { svc } = await service();
    const ac = new AbortController();
    ac.abort(new Error('stopped by the test'));
    await assert.rejects(
      svc.assemble({ project: 'local/api', view: 'execute', goal: GOAL, signal: ac.signal }),
      /stopped by the test/,
    );
  });
});

describe('ContextService.show and set', () => {
  it('shows each view’s effective settings and where each value came from', async () => {
    const { svc } = await service({
      maxFiles: 10,
      views: { strategize: { exclude: ['*.md'], reserves: { history: 5 } } },
    });
    const r = await svc.show({ project: 'local/api', view: 'execute' }, LOCAL_PRINCIPAL);
    assert.equal(r.revision, 1);
    const [v] = r.views;
    assert.equal(v?.view, 'execute');
    assert.deepEqual(v?.settings, {
      include: ['**'],
      exclude: ['*.md'],
      maxFileSize: 256 * 1024,
      maxTotalSize: 4 * 1024 * 1024,
      maxFiles: 10,
      tokenBudget: undefined,
      reserves: { system: 2000, history: 5, answer: 4096 },
      ranking: ['goal-match', 'recency', 'references', 'decisions'],
      instructions: { files: [], maxFileSize: 16_384, maxTokens: 4_000, enabled: true },
    });
    assert.deepEqual(v?.sources, {
      include: 'builtin',
      exclude: 'view:strategize',
      maxFileSize: 'builtin',
      maxTotalSize: 'builtin',
      maxFiles: 'view:default',
      tokenBudget: 'builtin',
      reserves: 'view:strategize',
      ranking: 'builtin',
      instructions: 'builtin',
    });
    const all = await svc.show({ project: 'local/api' }, LOCAL_PRINCIPAL);
    assert.deepEqual(
      all.views.map((x) => [x.view, x.sources.exclude]),
      [
        ['default', 'builtin'],
        ['strategize', 'view:strategize'],
        ['execute', 'view:strategize'],
        ['apply', 'view:strategize'],
      ],
    );
  });

  it('set writes a new revision, refuses a stale one, and null clears a field', async () => {
    const { svc, registry } = await service({ maxFiles: 10 });
    const r = await svc.set(
      { project: 'local/api', view: 'apply', settings: { maxFiles: 3, exclude: ['*.lock'] }, expectedRevision: 1 },
      LOCAL_PRINCIPAL,
    );
    assert.equal(r.revision, 2);
    assert.deepEqual([r.views[0]?.settings.maxFiles, r.views[0]?.sources.maxFiles], [3, 'view:apply']);
    const stored = await registry.visible('project', 'local/api', LOCAL_PRINCIPAL);
    assert.deepEqual(stored.definition.settings?.context, {
      maxFiles: 10,
      views: { apply: { maxFiles: 3, exclude: ['*.lock'] } },
    });
    await assert.rejects(
      svc.set(
        { project: 'local/api', view: 'default', settings: { maxFiles: 1 }, expectedRevision: 1 },
        LOCAL_PRINCIPAL,
      ),
      (e: unknown) => e instanceof AppError && e.reason === 'REVISION_CONFLICT',
    );
    const cleared = await svc.set(
      { project: 'local/api', view: 'apply', settings: { maxFiles: null, exclude: null } },
      LOCAL_PRINCIPAL,
    );
    assert.equal(cleared.revision, 3);
    assert.deepEqual([cleared.views[0]?.settings.maxFiles, cleared.views[0]?.sources.maxFiles], [10, 'view:default']);
    const after = await registry.visible('project', 'local/api', LOCAL_PRINCIPAL);
    assert.deepEqual(after.definition.settings?.context, { maxFiles: 10 });
    await svc.set({ project: 'local/api', view: 'default', settings: { maxFiles: null } }, LOCAL_PRINCIPAL);
    const none = await registry.visible('project', 'local/api', LOCAL_PRINCIPAL);
    assert.equal(none.definition.settings, undefined);
    assert.equal(none.revision, 4);
  });

  it('refuses bad values with located messages and writes nothing', async () => {
    const { svc, registry } = await service({ maxFiles: 10 });
    const refused = async (settings: Record<string, unknown>, field: string): Promise<void> => {
      await assert.rejects(
        svc.set({ project: 'local/api', view: 'execute', settings: settings }, LOCAL_PRINCIPAL),
        (e: unknown) =>
          e instanceof AppError &&
          e.reason === 'INVALID_PARAMS' &&
          e.fields.some((f) => f.field === field) &&
          /nothing was written/.test(e.message),
      );
    };
    await refused({ maxFiles: 0 }, 'settings.maxFiles');
    await refused({ maxFileSize: 'big' }, 'settings.maxFileSize');
    await refused({ ranking: ['vibes'] }, 'settings.ranking.0');
    await refused({ reserves: { history: -1 } }, 'settings.reserves.history');
    await refused({ colour: 'blue' }, 'settings.colour');
    await refused({ include: ['[z-a]'] }, 'settings.include.0');
    const p = await registry.visible('project', 'local/api', LOCAL_PRINCIPAL);
    assert.equal(p.revision, 1);
  });
});
