import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { InvalidArgumentError } from 'commander';
import { settingsFromFlags, sizeOption } from '../../../../../src/presentation/cli/commands/context.command.ts';
import { UsageError } from '../../../../../src/presentation/cli/exit-codes.ts';
import {
  bytesText,
  cutText,
  instructionsSummary,
  renderContextShown,
  renderInspection,
  type Inspection,
} from '../../../../../src/presentation/cli/render/context.render.ts';
import { Ui } from '../../../../../src/presentation/cli/render/ui.ts';

const ui = (format: 'plain' | 'rich'): Ui =>
  new Ui(format, { stdout: new PassThrough(), stderr: new PassThrough(), stdin: new PassThrough(), env: {} }, true);

const INSPECTION: Inspection = {
  project: 'local/api',
  view: 'execute',
  goal: 'fix the date parsing',
  settings: {
    include: ['**'],
    exclude: [],
    maxFileSize: 262144,
    maxTotalSize: 4194304,
    maxFiles: 400,
    reserves: { system: 2000, history: 8000, answer: 4096 },
    ranking: ['goal-match', 'recency'],
  },
  budget: {
    modelWindow: 32768,
    reserves: { system: 2000, history: 8000, answer: 4096 },
    available: 18672,
    source: 'window',
    used: 1234,
  },
  inventory: [{ resource: 'local/api-repo', files: 4, bytes: 322_000 }],
  files: [
    {
      resource: 'local/api-repo',
      path: 'src/date.ts',
      bytes: 1536,
      tokens: 1234,
      score: 3.5,
      why: [
        { strategy: 'goal-match', score: 3, reason: "goal term 'date' in path" },
        { strategy: 'recency', score: 0.5, reason: 'changed in the last commit' },
      ],
      included: true,
    },
    {
      resource: 'local/api-repo',
      path: 'big.txt',
      bytes: 320_000,
      tokens: 0,
      score: 0,
      why: [],
      included: false,
      excludedBy: 'max-file-size',
    },
    {
      resource: 'local/api-repo',
      path: 'logo.png',
      bytes: 8,
      tokens: 0,
      score: 0,
      why: [],
      included: false,
      excludedBy: 'binary',
    },
  ],
  cut: { 'max-file-size': 1, binary: 1, 'token-budget': 0 },
  totals: { included: 1, includedTokens: 1234, includedBytes: 1536, excluded: 3 },
  snapshot: 'sha256:abc',
  dryRun: false,
};

describe('agents project context rendering', () => {
  it('prints sizes in B, KiB and MiB', () => {
    assert.equal(bytesText(512), '512 B');
    assert.equal(bytesText(1536), '1.5 KiB');
    assert.equal(bytesText(4 * 1048576), '4.0 MiB');
  });

  it('says what each limit cut, in pipeline order, leaving out what cut nothing', () => {
    assert.equal(cutText(INSPECTION.cut), 'binary 1, max-file-size 1');
    assert.equal(cutText({}), '');
  });

  it('rich: the budget with where it comes from, the totals, the cuts, and a row per file with why', () => {
    const text = renderInspection(INSPECTION, ui('rich'));
    assert.match(text, /^Context of local\/api · view execute$/m);
    assert.match(
      text,
      /^ {2}budget\s+1,234 of 18,672 tokens used \(window 32,768 − system 2,000 − history 8,000 − answer 4,096\)$/m,
    );
    assert.match(text, /^ {2}inventory\s+local\/api-repo: 4 files, 314\.5 KiB$/m);
    assert.match(text, /^ {2}included\s+1 file, 1,234 tokens, 1\.5 KiB$/m);
    assert.match(text, /^ {2}cut\s+binary 1, max-file-size 1$/m);
    assert.match(
      text,
      /^src\/date\.ts\s+1\.5 KiB\s+1,234\s+3\.50\s+included\s+goal-match \+3\.00 goal term 'date' in path; recency \+0\.50 changed in the last commit$/m,
    );
    assert.match(text, /^big\.txt\s+312\.5 KiB\s+0\s+0\.00\s+max-file-size$/m);
    assert.match(text, /^logo\.png\s+8 B\s+0\s+0\.00\s+binary$/m);
    assert.match(text, /3 of 4 files listed/);
  });

  it('rich: a dry run marks its tokens as estimates', () => {
    const text = renderInspection(
      { ...INSPECTION, dryRun: true, budget: { ...INSPECTION.budget, source: 'override' } },
      ui('rich'),
    );
    assert.match(text, /^src\/date\.ts\s+1\.5 KiB\s+~1,234\s/m);
    assert.match(text, /tokens used \(set by --budget\)$/m);
  });

  it('plain: key: value lines, then one tab-separated line per file', () => {
    const text = renderInspection(INSPECTION, ui('plain'));
    assert.match(text, /^project: local\/api$/m);
    assert.match(text, /^dry run: false$/m);
    assert.match(text, /^budget: 1234 of 18672 tokens used/m);
    assert.match(text, /^src\/date\.ts\t1536\t1234\t3\.50\tincluded\tgoal-match \+3\.00 /m);
    assert.match(text, /^big\.txt\t320000\t0\t0\.00\tmax-file-size\t$/m);
  });
});

const WITH_INSTRUCTIONS: Inspection = {
  ...INSPECTION,
  instructions: [
    {
      resource: 'local/api-repo',
      path: 'src/AGENTS.md',
      bytes: 300,
      tokens: 70,
      truncated: false,
      why: 'folder of src/date.ts',
      included: true,
    },
    {
      resource: 'local/api-repo',
      path: 'AGENTS.md',
      bytes: 20000,
      tokens: 4000,
      truncated: true,
      why: 'root',
      included: true,
    },
    {
      resource: 'local/api-repo',
      path: 'docs/STYLE.md',
      bytes: 900,
      tokens: 200,
      truncated: false,
      why: 'named by project',
      included: false,
      excludedBy: 'max-tokens',
    },
  ],
};

describe('agents project context rendering of instruction files', () => {
  it('rich: a summary line and a table of them (size, tokens, status, why) before the files', () => {
    const text = renderInspection(WITH_INSTRUCTIONS, ui('rich'));
    assert.match(text, /^ {2}instructions\s+2 files, 4,070 tokens; 1 left out \(max-tokens 1\)$/m);
    assert.match(text, /^INSTRUCTION FILE\s+SIZE\s+TOKENS\s+STATUS\s+WHY$/m);
    assert.match(text, /^src\/AGENTS\.md\s+300 B\s+70\s+included\s+folder of src\/date\.ts$/m);
    assert.match(text, /^AGENTS\.md\s+19\.5 KiB\s+4,000\s+included, truncated\s+root$/m);
    assert.match(text, /^docs\/STYLE\.md\s+900 B\s+200\s+max-tokens\s+named by project$/m);
    assert.ok(text.indexOf('INSTRUCTION FILE') < text.indexOf('src/date.ts  '), 'before the files');
  });

  it('plain: one `instruction:` line each, with its tokens', () => {
    const text = renderInspection(WITH_INSTRUCTIONS, ui('plain'));
    assert.match(text, /^instructions: 2 files, 4070 tokens; 1 left out \(max-tokens 1\)$/m);
    assert.match(
      text,
      /^instruction: src\/AGENTS\.md \(local\/api-repo, 300 bytes, 70 tokens, included: folder of src\/date\.ts\)$/m,
    );
    assert.match(
      text,
      /^instruction: docs\/STYLE\.md \(local\/api-repo, 900 bytes, 200 tokens, max-tokens: named by project\)$/m,
    );
    assert.equal(instructionsSummary([], false), '0 files, 0 tokens');
  });

  it('an agent without instruction files (no `instructions`) prints as before', () => {
    const text = renderInspection(INSPECTION, ui('plain'));
    assert.doesNotMatch(text, /instruction/);
  });

  it('show prints the instruction settings as one field', () => {
    const settings = {
      ...INSPECTION.settings,
      instructions: { files: ['docs/STYLE.md'], maxFileSize: 16384, maxTokens: 4000, enabled: true },
    };
    const sources = {
      include: 'builtin',
      exclude: 'builtin',
      maxFileSize: 'builtin',
      maxTotalSize: 'builtin',
      maxFiles: 'builtin',
      tokenBudget: 'builtin',
      reserves: 'builtin',
      ranking: 'builtin',
      instructions: 'view:default',
    } as const;
    const views = [{ view: 'default' as const, settings, sources }];
    assert.match(
      renderContextShown({ views }, ui('plain')),
      /^default\tinstructions\tenabled=true maxFileSize=16384 maxTokens=4000 files=docs\/STYLE\.md\tview:default$/m,
    );
    assert.match(
      renderContextShown({ views }, ui('rich')),
      /^default\s+instructions\s+AGENTS\.md, CLEVERAGENTS\.md, also docs\/STYLE\.md; 16\.0 KiB a file, 4,000 tokens\s+view:default$/m,
    );
  });
});

describe('agents project context set flags', () => {
  it('reads sizes in bytes, KiB and MiB', () => {
    assert.equal(sizeOption('4096'), 4096);
    assert.equal(sizeOption('256KiB'), 262144);
    assert.equal(sizeOption('256k'), 262144);
    assert.equal(sizeOption('4MiB'), 4194304);
    for (const bad of ['0', '-1', '1.5k', '3 GB', 'big'])
      assert.throws(() => sizeOption(bad), InvalidArgumentError, bad);
  });

  it('turns flags into settings, --clear into nulls, and refuses a clash or nothing', () => {
    assert.deepEqual(
      settingsFromFlags({
        include: ['src/**'],
        maxFiles: 3,
        ranking: 'goal-match, recency',
        clear: ['token-budget', 'exclude'],
      }),
      { include: ['src/**'], maxFiles: 3, ranking: ['goal-match', 'recency'], tokenBudget: null, exclude: null },
    );
    assert.deepEqual(settingsFromFlags({ clear: ['maxTotalSize'] }), { maxTotalSize: null });
    assert.deepEqual(
      settingsFromFlags({
        instructionsFile: ['docs/STYLE.md'],
        instructionsMaxTokens: 100,
        instructionsMaxFileSize: 2048,
        instructions: 'off',
      }),
      { instructions: { files: ['docs/STYLE.md'], maxTokens: 100, maxFileSize: 2048, enabled: false } },
    );
    assert.deepEqual(settingsFromFlags({ clear: ['instructions'] }), { instructions: null });
    assert.throws(() => settingsFromFlags({ maxFiles: 3, clear: ['max-files'] }), UsageError);
    assert.throws(() => settingsFromFlags({ clear: ['colour'] }), /not a context setting/);
    assert.throws(() => settingsFromFlags({}), /nothing to set/);
  });
});
