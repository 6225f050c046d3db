/**
 * Contract cases of the context service (`_cleveragents/context/{show,set,inspect,simulate}`) on a
 * fixture repository whose files are known: what is a candidate (.gitignore honoured), what each
 * limit cuts and says so, settings per view with their sources, `set` revisioned like a registry
 * write, and a project the caller cannot see looking exactly like a missing one.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, it } from 'node:test';
import {
  A2AClient,
  CONTEXT_DEFAULTS,
  contextInspect,
  contextSet,
  contextShow,
  contextSimulate,
  projectRegistry,
  resourceRegistry,
  type ResultOf,
} from '../../src/protocol/client/index.ts';
import { initRepo } from '../support/git.ts';
import { rpcError } from './a2a.suite.ts';
import type { SuiteContext } from './suite-context.ts';

type Inspection = ResultOf<typeof contextInspect>;

/** The fixture: sizes chosen so that limits cut known files. */
export const CONTEXT_FIXTURE: Record<string, string | Buffer> = {
  '.gitignore': 'dist/\n*.log\n',
  'README.md': '# Api\n\nA small service.\n',
  'src/date.ts': `/** Parses a date string (YYYY-MM-DD) into a Date. */\nexport function parseDate(text: string): Date {\n  const [y, m, d] = text.split('-').map(Number);\n  return new Date(Date.UTC(y ?? 0, (m ?? 1) - 1, d ?? 1));\n}\n`,
  'src/util.ts': 'export const clamp = (n: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, n));\n',
  'docs/guide.md': `# Guide\n\n${'How to run the service, step by step, with its options and examples.\n'.repeat(12)}`,
  /** Text, but larger than the default maxFileSize (256 KiB). */
  'big.txt': 'a line of filler text\n'.repeat(15_000),
  /** Binary: NUL bytes. */
  'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]),
};
/** Files git ignores: never candidates, never listed. */
const IGNORED: Record<string, string> = { 'dist/out.js': 'console.log(1);\n', 'debug.log': 'log\n' };
/** Candidates that are neither binary nor over the default size, by path. */
const TEXT_FILES = ['.gitignore', 'README.md', 'docs/guide.md', 'src/date.ts', 'src/util.ts'];

const GOAL = 'fix the date parsing in parseDate';
const BUDGET = 50_000;
const byPath = (i: Inspection) => new Map(i.files.map((f) => [f.path, f]));
const included = (i: Inspection): string[] =>
  i.files
    .filter((f) => f.included)
    .map((f) => f.path)
    .sort();
/** What a result says, without what differs between transports (temporary paths, none here) or runs. */
const summary = (i: Inspection) => ({
  view: i.view,
  dryRun: i.dryRun,
  files: i.files.map((f) => [f.path, f.included, f.excludedBy ?? null]),
  cut: i.cut,
  totals: i.totals,
  inventory: i.inventory,
  budget: i.budget,
});

export function contextSuite(ctx: SuiteContext): void {
  let client: A2AClient;
  let work: string;
  const project = 'local/ctx-api';
  before(async () => {
    client = ctx.harness().client;
    work = mkdtempSync(join(tmpdir(), 'ca-context-'));
    const repo = join(work, 'api');
    const git = initRepo(repo, {});
    // Written byte for byte (the binary one too) and committed; the ignored ones are left untracked.
    for (const [p, c] of Object.entries({ ...CONTEXT_FIXTURE, ...IGNORED })) {
      mkdirSync(dirname(join(repo, p)), { recursive: true });
      writeFileSync(join(repo, p), c);
    }
    git('add', '-A');
    git('commit', '-qm', 'fixture');
    await client.call(resourceRegistry.add, {
      definition: { name: 'local/ctx-api-repo', type: 'git-checkout', path: repo, branch: 'main' },
    });
    // A token budget of its own: the default model window (8192) leaves nothing after the default reserves.
    await client.call(projectRegistry.add, {
      definition: { name: project, resources: ['local/ctx-api-repo'], settings: { context: { tokenBudget: BUDGET } } },
    });
    await client.call(projectRegistry.add, {
      definition: { name: 'local/ctx-bare', resources: ['local/ctx-api-repo'] },
    });
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('shows the effective settings of every view, each with its source', async () => {
    const shown = await client.call(contextShow, { project: 'ctx-api' });
    assert.equal(shown.project, project, 'a bare name is in local/');
    assert.equal(shown.revision, 1);
    assert.deepEqual(
      shown.views.map((v) => v.view),
      ['default', 'strategize', 'execute', 'apply'],
    );
    for (const v of shown.views) {
      assert.deepEqual(v.settings, { ...JSON.parse(JSON.stringify(CONTEXT_DEFAULTS)), tokenBudget: BUDGET }, v.view);
      const { tokenBudget, ...rest } = v.sources;
      assert.equal(tokenBudget, 'view:default', `${v.view} inherits the default view's budget`);
      assert.ok(
        Object.values(rest).every((s) => s === 'builtin'),
        `${v.view}: ${JSON.stringify(v.sources)}`,
      );
    }
    const bare = await client.call(contextShow, { project: 'local/ctx-bare' });
    for (const v of bare.views) {
      assert.deepEqual(v.settings, JSON.parse(JSON.stringify(CONTEXT_DEFAULTS)), v.view);
      assert.ok(Object.values(v.sources).every((s) => s === 'builtin'));
    }
    const one = await client.call(contextShow, { project, view: 'execute' });
    assert.deepEqual(
      one.views.map((v) => v.view),
      ['execute'],
    );
    ctx.record('context-show-defaults', shown);
  });

  it('lists what a goal gets on the fixture: .gitignore honoured, the binary and the big file cut and said why', async () => {
    const i = await client.call(contextInspect, { project, goal: GOAL });
    assert.equal(i.project, project);
    assert.equal(i.view, 'default');
    assert.equal(i.goal, GOAL);
    assert.equal(i.dryRun, false);
    assert.deepEqual(i.inventory.length, 1);
    assert.equal(i.inventory[0]?.resource, 'local/ctx-api-repo');
    assert.equal(i.inventory[0]?.files, Object.keys(CONTEXT_FIXTURE).length, 'the ignored files are not considered');
    const files = byPath(i);
    assert.ok(!files.has('dist/out.js') && !files.has('debug.log'), 'ignored files are not listed');
    assert.deepEqual(included(i), TEXT_FILES);
    assert.equal(files.get('logo.png')?.excludedBy, 'binary');
    assert.equal(files.get('big.txt')?.excludedBy, 'max-file-size');
    assert.equal(files.get('big.txt')?.bytes, 'a line of filler text\n'.length * 15_000);
    assert.deepEqual(i.cut, { binary: 1, 'max-file-size': 1 });
    assert.deepEqual(i.totals.included, TEXT_FILES.length);
    assert.deepEqual(i.totals.excluded, 2);
    // Included ones first, best first: the file the goal names ranks top, and says why.
    assert.equal(i.files[0]?.path, 'src/date.ts');
    assert.ok(
      i.files.slice(0, TEXT_FILES.length).every((f) => f.included),
      'included files are listed first',
    );
    const date = files.get('src/date.ts');
    assert.ok(date && date.score > (files.get('src/util.ts')?.score ?? 0), 'date.ts outranks util.ts');
    assert.ok(date?.why.some((w) => w.strategy === 'goal-match' && w.score > 0 && /dat/i.test(w.reason)));
    assert.equal(
      date?.score,
      date?.why.reduce((a, w) => a + w.score, 0),
      'the score is the sum of what each strategy gave',
    );
    for (const f of i.files.filter((x) => x.included)) assert.ok(f.tokens > 0, `${f.path} has tokens`);
    assert.equal(
      i.totals.includedTokens,
      i.files.filter((f) => f.included).reduce((a, f) => a + f.tokens, 0),
    );
    assert.equal(
      i.totals.includedBytes,
      i.files.filter((f) => f.included).reduce((a, f) => a + f.bytes, 0),
    );
    assert.equal(i.budget.used, i.totals.includedTokens);
    assert.equal(i.budget.source, 'view');
    assert.equal(i.budget.available, BUDGET);
    const again = await client.call(contextInspect, { project, goal: GOAL });
    assert.equal(again.snapshot, i.snapshot, 'the same tree and goal give the same snapshot');
    assert.deepEqual(summary(again), summary(i));
    ctx.record('context-inspect', summary(i));
  });

  it('cuts exactly what the token budget does not fit, and says so', async () => {
    const full = await client.call(contextInspect, { project, goal: GOAL });
    const top = full.files[0];
    assert.equal(top?.path, 'src/date.ts');
    const i = await client.call(contextInspect, { project, goal: GOAL, budget: top.tokens });
    assert.deepEqual(included(i), ['src/date.ts']);
    assert.deepEqual(i.budget, { ...i.budget, source: 'override', available: top.tokens, used: top.tokens });
    const files = byPath(i);
    for (const p of TEXT_FILES.filter((x) => x !== 'src/date.ts'))
      assert.equal(files.get(p)?.excludedBy, 'token-budget', p);
    assert.deepEqual(i.cut, { binary: 1, 'max-file-size': 1, 'token-budget': TEXT_FILES.length - 1 });
    assert.equal(i.totals.includedTokens, top.tokens);
    assert.notEqual(i.snapshot, full.snapshot, 'another context, another snapshot');
    ctx.record('context-budget', summary(i));
  });

  it('simulates without assembling: the same choice, estimated tokens, dryRun', async () => {
    const s = await client.call(contextSimulate, { project, goal: GOAL });
    assert.equal(s.dryRun, true);
    assert.equal(s.goal, GOAL);
    assert.deepEqual(included(s), TEXT_FILES);
    assert.deepEqual(s.cut, { binary: 1, 'max-file-size': 1 });
    for (const f of s.files.filter((x) => x.included)) assert.ok(f.tokens > 0, `${f.path}: an estimate`);
    const tight = await client.call(contextSimulate, { project, goal: GOAL, budget: 1, view: 'strategize' });
    assert.equal(tight.view, 'strategize');
    assert.equal(tight.budget.source, 'override');
    assert.equal(tight.budget.available, 1);
    assert.ok(
      tight.files.filter((f) => !f.included).some((f) => f.excludedBy === 'token-budget'),
      'a budget of one token cuts',
    );
    ctx.record('context-simulate', summary(s));
  });

  it('without a budget of its own, the budget is the model window minus the reserves (each at most its share of the window)', async () => {
    const i = await client.call(contextSimulate, { project: 'local/ctx-bare', goal: GOAL });
    const b = i.budget;
    assert.equal(b.source, 'window');
    const d = CONTEXT_DEFAULTS.reserves;
    const w = b.modelWindow;
    assert.deepEqual(b.reserves, {
      system: Math.min(d.system, Math.floor(w * 0.1)),
      history: Math.min(d.history, Math.floor(w * 0.25)),
      answer: Math.min(d.answer, Math.floor(w * 0.25)),
    });
    assert.ok(b.available > 0, 'a model with the default window still sees files');
    assert.equal(b.available, Math.max(0, b.modelWindow - b.reserves.system - b.reserves.history - b.reserves.answer));
    assert.ok(i.files.every((f) => f.included || f.excludedBy !== undefined));
    ctx.record('context-window', b);
  });

  it('sets a view (revisioned), inherits it down the views, clears it with null, and refuses a stale revision', async () => {
    const set = await client.call(contextSet, {
      project,
      view: 'default',
      settings: { maxFiles: 2, exclude: ['docs/**'] },
      expectedRevision: 1,
    });
    assert.equal(set.revision, 2);
    const shown = await client.call(contextShow, { project });
    assert.equal(shown.revision, 2);
    for (const v of shown.views) {
      assert.equal(v.settings.maxFiles, 2, v.view);
      assert.equal(v.sources.maxFiles, 'view:default', `${v.view} inherits from default`);
      assert.deepEqual(v.settings.exclude, ['docs/**']);
      assert.equal(v.sources.maxFileSize, 'builtin');
    }
    const stored = await client.call(projectRegistry.show, { name: project });
    assert.deepEqual(stored.definition.settings?.context, { tokenBudget: BUDGET, maxFiles: 2, exclude: ['docs/**'] });

    const stale = await rpcError(
      client.call(contextSet, { project, view: 'execute', settings: { maxFiles: 9 }, expectedRevision: 1 }),
      -32004,
      'RevisionConflictError',
    );
    assert.match(stale.message, /revision 2, not 1/);

    const exec = await client.call(contextSet, {
      project,
      view: 'execute',
      settings: { maxFiles: 1, include: ['src/**'] },
    });
    assert.equal(exec.revision, 3);
    const after3 = await client.call(contextShow, { project });
    const view = (name: string) => after3.views.find((v) => v.view === name);
    assert.equal(view('strategize')?.settings.maxFiles, 2);
    assert.equal(view('execute')?.settings.maxFiles, 1);
    assert.equal(view('execute')?.sources.maxFiles, 'view:execute');
    assert.equal(view('apply')?.sources.maxFiles, 'view:execute', 'apply inherits from execute');
    assert.deepEqual(view('apply')?.settings.include, ['src/**']);
    assert.equal(view('default')?.sources.include, 'builtin');

    // The limits take effect: the default view's maxFiles 2 and exclude, the execute view's include.
    const d = await client.call(contextInspect, { project, goal: GOAL });
    assert.equal(d.totals.included, 2);
    assert.ok(included(d).includes('src/date.ts'));
    // A file the globs leave out is counted, not listed.
    assert.ok(!byPath(d).has('docs/guide.md'));
    assert.equal(d.cut['excluded-glob'], 1);
    assert.equal(d.cut['max-files'], TEXT_FILES.length - 1 - 2, 'max-files cut the rest of the candidates');
    const e = await client.call(contextInspect, { project, goal: GOAL, view: 'execute' });
    assert.deepEqual(included(e), ['src/date.ts']);
    assert.ok(!byPath(e).has('README.md'));
    // Outside src/**: .gitignore, README.md, docs/guide.md (excluded too), big.txt, logo.png.
    assert.equal((e.cut['not-included'] ?? 0) + (e.cut['excluded-glob'] ?? 0), 5);
    assert.equal(byPath(e).get('src/util.ts')?.excludedBy, 'max-files');

    const cleared = await client.call(contextSet, {
      project,
      view: 'execute',
      settings: { maxFiles: null, include: null },
      expectedRevision: 3,
    });
    assert.equal(cleared.revision, 4);
    const back = await client.call(contextShow, { project, view: 'execute' });
    assert.equal(back.views[0]?.settings.maxFiles, 2);
    assert.equal(back.views[0]?.sources.maxFiles, 'view:default', 'cleared: inherited again');
    assert.equal(back.views[0]?.sources.include, 'builtin');
    ctx.record('context-set', { set, back });
  });

  it('refuses bad values and changes nothing', async () => {
    const before = await client.call(contextShow, { project });
    const bad: Array<Record<string, unknown>> = [
      { maxFiles: 0 },
      { maxFiles: 1.5 },
      { maxFileSize: -1 },
      { include: [''] },
      { ranking: ['magic'] },
      { reserves: { system: -1 } },
      { colour: 'blue' },
      { include: 'src/**' },
    ];
    for (const settings of bad) {
      const err = await rpcError(
        client.raw(contextSet.name, { project, view: 'default', settings }),
        -32602,
        'ValidationError',
      );
      assert.ok(err.message.length > 0, JSON.stringify(settings));
    }
    await rpcError(
      client.raw(contextSet.name, { project, view: 'nightly', settings: { maxFiles: 1 } }),
      -32602,
      'ValidationError',
    );
    await rpcError(client.raw(contextSet.name, { project, settings: { maxFiles: 1 } }), -32602, 'ValidationError');
    assert.deepEqual(await client.call(contextShow, { project }), before, 'nothing changed');
  });

  it('refuses an unknown view, a goal too long, a budget out of range, a plan and a goal together', async () => {
    for (const method of [contextShow, contextInspect, contextSimulate])
      await rpcError(client.raw(method.name, { project, goal: GOAL, view: 'nightly' }), -32602, 'ValidationError');
    const long = 'x'.repeat(4001);
    await rpcError(client.raw(contextSimulate.name, { project, goal: long }), -32602, 'ValidationError');
    await rpcError(client.raw(contextInspect.name, { project, goal: long }), -32602, 'ValidationError');
    await rpcError(client.raw(contextSimulate.name, { project }), -32602, 'ValidationError');
    for (const budget of [0, 10_000_001, 1.5, '100'])
      await rpcError(client.raw(contextSimulate.name, { project, goal: GOAL, budget }), -32602, 'ValidationError');
    await rpcError(
      client.raw(contextInspect.name, { project, goal: GOAL, planId: '01HZZZZZZZZZZZZZZZZZZZZZZZ' }),
      -32602,
      'ValidationError',
    );
    await rpcError(client.raw(contextShow.name, { project: 'Not A Name' }), -32602, 'ValidationError');
  });

  it('lists the instruction files (root, the folder of a file in play) with tokens from the same budget, and refuses a named path outside the resource', async () => {
    const repo = join(work, 'instructed');
    initRepo(repo, {
      'AGENTS.md': 'Run the tests before you finish.\n',
      'src/AGENTS.md': 'Months are zero based.\n',
      'src/date.ts': CONTEXT_FIXTURE['src/date.ts'] as string,
      'docs/AGENTS.md': 'Docs only.\n',
    });
    await client.call(resourceRegistry.add, {
      definition: { name: 'local/ctx-instructed-repo', type: 'git-checkout', path: repo, branch: 'main' },
    });
    await client.call(projectRegistry.add, {
      definition: {
        name: 'local/ctx-instructed',
        resources: ['local/ctx-instructed-repo'],
        settings: { context: { tokenBudget: BUDGET, include: ['src/**'] } },
      },
    });
    const i = await client.call(contextInspect, { project: 'ctx-instructed', goal: GOAL });
    assert.deepEqual(
      i.instructions?.map((f) => [f.path, f.why, f.included, f.truncated]),
      [
        ['src/AGENTS.md', 'folder of src/date.ts', true, false],
        ['AGENTS.md', 'root', true, false],
      ],
    );
    for (const f of i.instructions ?? []) assert.ok(f.tokens > 0, f.path);
    const tokens = (i.instructions ?? []).reduce((n, f) => n + f.tokens, 0);
    assert.equal(i.budget.used, i.totals.includedTokens + tokens);
    assert.deepEqual(included(i), ['src/date.ts'], 'instruction files are not files of the context');
    const sim = await client.call(contextSimulate, { project: 'ctx-instructed', goal: GOAL });
    assert.deepEqual(
      sim.instructions?.map((f) => f.path),
      ['src/AGENTS.md', 'AGENTS.md'],
    );
    const err = await rpcError(
      client.call(projectRegistry.add, {
        definition: {
          name: 'local/ctx-escape',
          resources: ['local/ctx-instructed-repo'],
          settings: { context: { instructions: { files: ['../outside.md'] } } },
        },
      }),
      -32602,
      'ValidationError',
    );
    assert.match(err.message, /settings\.context\.instructions\.files\[0\]: must stay inside the resource \(no \.\.\)/);
  });

  it("a project in another principal's namespace looks exactly like a missing one", async () => {
    const calls = (name: string) => [
      client.call(contextShow, { project: name }),
      client.call(contextSet, { project: name, view: 'default', settings: { maxFiles: 1 } }),
      client.call(contextInspect, { project: name, goal: GOAL }),
      client.call(contextSimulate, { project: name, goal: GOAL }),
    ];
    const missing = await Promise.all(calls('local/nobody').map((p) => rpcError(p, -32001, 'ResourceNotFoundError')));
    const foreign = await Promise.all(calls('team-x/api').map((p) => rpcError(p, -32001, 'ResourceNotFoundError')));
    foreign.forEach((f, n) =>
      assert.equal(f.message.replace('team-x/api', '<p>'), missing[n]?.message.replace('local/nobody', '<p>')),
    );
  });
}
