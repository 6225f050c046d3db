/**
 * End to end: `agents project context show|set|inspect|simulate` through the built CLI in local
 * mode (each call spawns its own agent over stdio), on a temporary git repository, as a user
 * without a terminal runs it (plain output), and as one at a terminal would see it (--format rich).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { agentsCli, type CliResult } from '../support/cli.ts';
import { initRepo } from '../support/git.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-context-e2e');
const DATA = join(ROOT, 'data');
const cli = agentsCli({ dataDir: DATA, configHome: join(ROOT, 'no-config'), cwd: ROOT });
const GOAL = 'fix the date parsing';

function ok(res: CliResult, what: string, code = 0): CliResult {
  assert.equal(res.code, code, `${what}: exit ${res.code}\nstdout: ${res.stdout}\nstderr: ${res.stderr}`);
  return res;
}

describe('agents project context, local mode', () => {
  before(async () => {
    const repo = join(ROOT, 'api');
    initRepo(repo, {
      '.gitignore': '*.log\n',
      'src/date.ts': 'export function parseDate(text: string): Date {\n  return new Date(text);\n}\n',
      'src/util.ts': 'export const clamp = (n: number): number => Math.max(0, n);\n',
      'README.md': '# Api\n',
      'big.txt': 'filler line of text\n'.repeat(16_000),
    });
    writeFileSync(join(repo, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d]));
    writeFileSync(join(repo, 'debug.log'), 'ignored\n');
    ok(
      await cli.run(['resource', 'add', 'git-checkout', 'api-repo', '--path', repo, '--branch', 'main']),
      'resource add',
    );
    ok(await cli.run(['project', 'add', 'api', '--resource', 'api-repo']), 'project add');
    // A budget of its own: the default model window (8192) leaves nothing after the default reserves.
    ok(await cli.run(['project', 'context', 'set', 'api', '--view', 'default', '--token-budget', '50000']), 'budget');
  });

  it('show: the effective settings per view and where each came from, one tab-separated line each', async () => {
    const res = ok(await cli.run(['project', 'context', 'show', 'api']), 'show');
    const lines = res.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 4 * 9, 'four views, nine settings');
    assert.ok(lines.includes('default\tmaxFileSize\t262144\tbuiltin'), res.stdout);
    assert.ok(lines.includes('apply\tmaxFiles\t400\tbuiltin'), res.stdout);
    assert.ok(lines.includes('execute\ttokenBudget\t50000\tview:default'), res.stdout);
    const rich = ok(
      await cli.run(['--format', 'rich', 'project', 'context', 'show', 'api', '--view', 'strategize']),
      'rich',
    );
    assert.match(rich.stdout, /^Context of local\/api \(revision 2\)$/m);
    assert.match(rich.stdout, /^VIEW\s+SETTING\s+VALUE\s+FROM$/m);
    assert.match(rich.stdout, /^strategize\s+maxFileSize\s+256\.0 KiB\s+builtin$/m);
    assert.match(rich.stdout, /^strategize\s+maxTotalSize\s+4\.0 MiB\s+builtin$/m);
    assert.doesNotMatch(rich.stdout, /^default/m, 'only the view asked for');
    const defaults = ok(await cli.run(['project', 'context', 'show']), 'show without a project');
    assert.ok(defaults.stdout.split('\n').includes('default\tmaxFiles\t400\tbuiltin'));
  });

  it('set: writes a view, prints the new revision, and show then says where the values come from', async () => {
    const res = ok(
      await cli.run([
        'project',
        'context',
        'set',
        'api',
        '--view',
        'default',
        '--max-files',
        '3',
        '--max-file-size',
        '64KiB',
      ]),
      'set',
    );
    assert.equal(res.stdout, 'set\tlocal/api\tdefault\t3\n');
    const shown = ok(await cli.run(['project', 'context', 'show', 'api', '--view', 'execute']), 'show');
    assert.ok(shown.stdout.split('\n').includes('execute\tmaxFiles\t3\tview:default'), shown.stdout);
    assert.ok(shown.stdout.split('\n').includes('execute\tmaxFileSize\t65536\tview:default'), shown.stdout);
    const stale = await cli.run([
      'project',
      'context',
      'set',
      'api',
      '--view',
      'execute',
      '--max-files',
      '9',
      '--expected-revision',
      '2',
    ]);
    ok(stale, 'stale set', 5);
    assert.match(stale.stderr, /revision 3, not 2/);
    const rich = ok(
      await cli.run([
        '--format',
        'rich',
        'project',
        'context',
        'set',
        'api',
        '--view',
        'execute',
        '--include',
        'src/**',
        '--clear',
        'max-file-size',
      ]),
      'rich set',
    );
    assert.match(
      rich.stdout,
      /^Set the execute view of local\/api: include src\/\*\*; maxFileSize cleared \(now 64\.0 KiB from view:default\) \(revision 4\)$/m,
    );
    const bad = await cli.run(['project', 'context', 'set', 'api', '--view', 'default', '--ranking', 'magic']);
    ok(bad, 'bad ranking', 7);
    const none = await cli.run(['project', 'context', 'set', 'api', '--view', 'default']);
    ok(none, 'nothing to set', 2);
    assert.match(none.stderr, /nothing to set/);
    const unknownView = await cli.run(['project', 'context', 'set', 'api', '--view', 'nightly', '--max-files', '1']);
    ok(unknownView, 'unknown view', 2);
    // Back to the defaults for the inspections below.
    ok(
      await cli.run(['project', 'context', 'set', 'api', '--view', 'default', '--clear', 'max-files', 'max-file-size']),
      'clear',
    );
    ok(await cli.run(['project', 'context', 'set', 'api', '--view', 'execute', '--clear', 'include']), 'clear');
  });

  it('inspect: the budget, what each limit cut, and per file its size, tokens, score, status and why', async () => {
    const data = await cli.ok(['project', 'context', 'inspect', 'api', '--goal', GOAL]);
    assert.equal(data.dryRun, false);
    const rich = ok(
      await cli.run(['--format', 'rich', 'project', 'context', 'inspect', 'api', '--goal', GOAL]),
      'inspect',
    );
    const out = rich.stdout;
    assert.match(out, /^Context of local\/api · view default$/m);
    assert.match(out, new RegExp(`^  goal\\s+${GOAL}$`, 'm'));
    assert.match(
      out,
      new RegExp(
        `^  budget\\s+${data.budget.used.toLocaleString('en-US')} of 50,000 tokens used \\(the default view's tokenBudget\\)$`,
        'm',
      ),
    );
    assert.match(out, /^ {2}included\s+4 files, [\d,]+ tokens, \d+ B$/m);
    assert.match(out, /^ {2}cut\s+binary 1, max-file-size 1$/m);
    assert.match(out, /^FILE\s+SIZE\s+TOKENS\s+SCORE\s+STATUS\s+WHY$/m);
    const date = data.files.find((f: { path: string }) => f.path === 'src/date.ts');
    assert.match(
      out,
      new RegExp(
        `^src/date\\.ts\\s+\\d+ B\\s+${date.tokens}\\s+${date.score.toFixed(2)}\\s+included\\s+goal-match \\+`,
        'm',
      ),
    );
    assert.match(out, /^big\.txt\s+312\.5 KiB\s+\S+\s+\S+\s+max-file-size/m);
    assert.match(out, /^logo\.png\s+8 B\s+\S+\s+\S+\s+binary/m);
    assert.doesNotMatch(out, /debug\.log/, 'ignored by .gitignore');
    assert.doesNotMatch(out, /Simulation complete/);
    const plain = ok(
      await cli.run(['project', 'context', 'inspect', 'api', '--goal', GOAL, '--budget', String(date.tokens)]),
      'plain',
    );
    assert.match(plain.stdout, /^dry run: false$/m);
    assert.match(plain.stdout, /^src\/date\.ts\t\d+\t\d+\t[\d.]+\tincluded\t/m);
    assert.match(plain.stdout, /^src\/util\.ts\t\d+\t\d+\t[\d.]+\ttoken-budget\t/m);
    assert.match(plain.stdout, /token-budget \d+/);
    const both = await cli.run([
      'project',
      'context',
      'inspect',
      'api',
      '--goal',
      GOAL,
      '--plan',
      '01HZZZZZZZZZZZZZZZZZZZZZZZ',
    ]);
    ok(both, 'plan and goal', 2);
    const missing = await cli.run(['project', 'context', 'inspect', 'nobody', '--goal', GOAL]);
    ok(missing, 'missing project', 3);
  });

  it('simulate: a dry run with estimates, and says nothing was assembled', async () => {
    const rich = ok(
      await cli.run([
        '--format',
        'rich',
        'project',
        'context',
        'simulate',
        'api',
        '--goal',
        GOAL,
        '--budget',
        '5000',
        '--view',
        'execute',
      ]),
      'simulate',
    );
    assert.match(rich.stdout, /^Context of local\/api · view execute$/m);
    assert.match(rich.stdout, /tokens used \(set by --budget\)$/m);
    assert.match(rich.stdout, /^src\/date\.ts\s+\d+ B\s+~\d+\s/m, 'tokens are estimates');
    assert.match(rich.stdout, /\nSimulation complete \(dry run: nothing was assembled\)\n$/);
    const plain = ok(await cli.run(['project', 'context', 'simulate', 'api', '--goal', GOAL]), 'plain simulate');
    assert.match(plain.stdout, /^dry run: true$/m);
    assert.match(plain.stdout, /Simulation complete \(dry run: nothing was assembled\)\n$/);
    const noGoal = await cli.run(['project', 'context', 'simulate', 'api']);
    ok(noGoal, 'no goal', 2);
    const json = JSON.parse(
      ok(await cli.run(['--format', 'json', 'project', 'context', 'simulate', 'api', '--goal', GOAL]), 'json').stdout,
    ) as {
      data: { dryRun: boolean };
    };
    assert.equal(json.data.dryRun, true);
  });
});
