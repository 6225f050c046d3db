/**
 * Instruction files in the context (ContextService with a real inventory on a temporary git
 * repository): which are read (roots always, a folder's when a file in play lies under it, the
 * named ones), in which order, the limits (maxFileSize cuts, maxTokens and the budget leave out),
 * named paths refused when they leave the resource, the text the actor reads, and the caches.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LOCAL_PRINCIPAL, type FileInventory } from '../../../../src/application/index.ts';
import { ContextService } from '../../../../src/application/context/context.service.ts';
import { pathsNamed } from '../../../../src/application/context/context-instructions.ts';
import {
  fragmentsText,
  type AssembledContext,
  type ContextInspection,
} from '../../../../src/application/context/context.types.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import { FsFileInventory } from '../../../../src/infrastructure/index.ts';
import { initRepo } from '../../../support/git.ts';
import { recordingInventory, registryWith, wordTokens } from './support.ts';

const FILES = {
  '.gitignore': 'build/\n',
  'AGENTS.md': 'root rules: use tabs\n',
  'CLEVERAGENTS.md': 'root cleveragents rules\n',
  'src/AGENTS.md': 'src rules: no default exports\n',
  'src/date/AGENTS.md': 'date rules: months are zero based\n',
  'src/date/parse.ts': 'export const parse = (s: string) => s;\n',
  'src/util.ts': 'export const id = 1;\n',
  'docs/AGENTS.md': 'docs rules\n',
  'docs/guide.md': 'a guide\n',
  'docs/STYLE.md': 'style: short sentences\n',
  'build/AGENTS.md': 'ignored rules\n',
};

let dir: string;
let repo: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'ca-instructions-'));
  repo = join(dir, 'api');
  initRepo(repo, FILES);
  // Ignored by .gitignore: never listed, so never read.
  writeFileSync(join(repo, 'build/AGENTS.md'), 'ignored rules\n');
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function service(context?: Record<string, unknown>, inventory?: FileInventory) {
  const { registry } = await registryWith(repo, context);
  const svc = new ContextService({ registry, inventory: inventory ?? new FsFileInventory(), tokens: wordTokens });
  return { svc, registry };
}

const listed = (c: ContextInspection): Array<[string, string, boolean, string | undefined]> =>
  c.instructions.map((f) => [f.path, f.why, f.included, f.excludedBy]);
const tokensOf = (text: string): number => (text.match(/\S+/g) ?? []).length;
const SRC_ONLY = { include: ['src/**'] };

describe('instruction files: which, and in which order', () => {
  it('the roots always; a folder’s when a selected file lies under it, nearest first; never an ignored one', async () => {
    const { svc } = await service(SRC_ONLY);
    const c = await svc.inspect({ project: 'local/api', goal: 'parse dates', budget: 1000 }, LOCAL_PRINCIPAL);
    assert.deepEqual(listed(c), [
      ['src/date/AGENTS.md', 'folder of src/date/parse.ts', true, undefined],
      ['src/AGENTS.md', 'folder of src/date/parse.ts', true, undefined],
      ['AGENTS.md', 'root', true, undefined],
      ['CLEVERAGENTS.md', 'root', true, undefined],
    ]);
    // docs/ holds no file in play (include src/**), build/ is ignored.
    const f = c.instructions.find((i) => i.path === 'src/date/AGENTS.md');
    assert.deepEqual(f, {
      resource: 'local/api',
      path: 'src/date/AGENTS.md',
      bytes: Buffer.byteLength(FILES['src/date/AGENTS.md']),
      tokens: tokensOf(FILES['src/date/AGENTS.md']),
      truncated: false,
      why: 'folder of src/date/parse.ts',
      included: true,
    });
    // Not files of the context: their text is given once, as instructions.
    assert.ok(!c.files.some((x) => x.path.endsWith('AGENTS.md')), JSON.stringify(c.files.map((x) => x.path)));
    const instructionTokens = c.instructions.reduce((n, i) => n + i.tokens, 0);
    assert.equal(c.budget.used, c.totals.includedTokens + instructionTokens, 'one budget for both');
  });

  it('a folder a goal names brings its instruction files into play, even when none of its files is selected', async () => {
    const { svc } = await service({ include: ['src/util.ts'] });
    const c = await svc.inspect(
      { project: 'local/api', goal: 'tidy docs/ and src/date/', budget: 1000 },
      LOCAL_PRINCIPAL,
    );
    assert.deepEqual(listed(c), [
      ['src/date/AGENTS.md', 'folder of src/date/', true, undefined],
      ['docs/AGENTS.md', 'folder of docs/', true, undefined],
      ['src/AGENTS.md', 'folder of src/date/', true, undefined],
      ['AGENTS.md', 'root', true, undefined],
      ['CLEVERAGENTS.md', 'root', true, undefined],
    ]);
    assert.deepEqual(pathsNamed(['see src/date/parse.ts and docs/']), ['src/date/parse.ts', 'docs/']);
  });

  it('files named by the project and by the action come after the roots; a missing one is listed as missing', async () => {
    const { svc, registry } = await service({ ...SRC_ONLY, instructions: { files: ['docs/STYLE.md', 'nope.md'] } });
    await registry.add(
      'action',
      {
        definition: {
          name: 'local/fix',
          descriptionTemplate: 'fix it',
          definitionOfDone: 'fixed',
          instructions: ['./docs//guide.md'],
        },
      },
      LOCAL_PRINCIPAL,
    );
    const c = await svc.assemble({ project: 'local/api', view: 'default', goal: 'util', action: 'local/fix' });
    assert.deepEqual(listed(c).slice(-5), [
      ['AGENTS.md', 'root', true, undefined],
      ['CLEVERAGENTS.md', 'root', true, undefined],
      ['docs/STYLE.md', 'named by project', true, undefined],
      ['docs/guide.md', 'named by action', true, undefined],
      ['nope.md', 'named by project', false, 'missing'],
    ]);
    const text = fragmentsText(c, 'for you');
    const at = (s: string): number => text.indexOf(s);
    assert.ok(at('=== docs/STYLE.md (local/api, named by project) ===\nstyle: short sentences') > 0, text);
    assert.ok(at('=== docs/guide.md (local/api, named by action) ===') > at('=== docs/STYLE.md'), text);
    assert.ok(at('Files of project local/api') > at('=== docs/guide.md'), 'instructions before the files');
    assert.ok(!c.files.some((f) => f.path === 'docs/guide.md'), 'a named file is not also a file of the context');
  });

  it('enabled: false reads none (AGENTS.md is an ordinary file then)', async () => {
    const { svc } = await service({ instructions: { enabled: false } });
    const c = await svc.assemble({ project: 'local/api', view: 'default', goal: 'rules' });
    assert.deepEqual(c.instructions, []);
    assert.deepEqual(c.instructionFragments, []);
    assert.ok(c.files.some((f) => f.path === 'AGENTS.md' && f.included));
    assert.doesNotMatch(fragmentsText(c, 'for you'), /^Instructions for project/);
  });
});

describe('instruction files: limits', () => {
  it('maxTokens leaves the last in priority out (the roots are kept first), each with its reason', async () => {
    const roots = tokensOf(FILES['AGENTS.md']) + tokensOf(FILES['CLEVERAGENTS.md']);
    const { svc } = await service({
      ...SRC_ONLY,
      instructions: { maxTokens: roots + tokensOf(FILES['src/date/AGENTS.md']) },
    });
    const c = await svc.inspect({ project: 'local/api', goal: 'parse dates', budget: 1000 }, LOCAL_PRINCIPAL);
    assert.deepEqual(listed(c), [
      ['src/date/AGENTS.md', 'folder of src/date/parse.ts', true, undefined],
      ['AGENTS.md', 'root', true, undefined],
      ['CLEVERAGENTS.md', 'root', true, undefined],
      ['src/AGENTS.md', 'folder of src/date/parse.ts', false, 'max-tokens'],
    ]);
  });

  it('the budget is shared: instructions and files together never pass it, room made for the nearest', async () => {
    const { svc } = await service(SRC_ONLY);
    const roots = tokensOf(FILES['AGENTS.md']) + tokensOf(FILES['CLEVERAGENTS.md']);
    const budget = roots + tokensOf(FILES['src/date/parse.ts']);
    const c = await svc.inspect({ project: 'local/api', goal: 'parse dates', budget }, LOCAL_PRINCIPAL);
    assert.ok(c.budget.used <= budget, `used ${c.budget.used} of ${budget}`);
    // parse.ts was chosen first and brought its folders in; the files were chosen again with room
    // for the nearest folder's instructions (and no longer fit).
    assert.deepEqual(listed(c), [
      ['src/date/AGENTS.md', 'folder of src/date/parse.ts', true, undefined],
      ['AGENTS.md', 'root', true, undefined],
      ['CLEVERAGENTS.md', 'root', true, undefined],
      ['src/AGENTS.md', 'folder of src/date/parse.ts', false, 'token-budget'],
    ]);
    assert.equal(c.budget.used, roots + tokensOf(FILES['src/date/AGENTS.md']));
    const none = await svc.inspect({ project: 'local/api', goal: 'parse', budget: 3 }, LOCAL_PRINCIPAL);
    assert.deepEqual(
      none.instructions.map((i) => [i.path, i.excludedBy]),
      [
        ['CLEVERAGENTS.md', undefined],
        ['AGENTS.md', 'token-budget'],
      ],
      'AGENTS.md (4 tokens) does not fit in 3, the next one (3) does; the included are listed first',
    );
  });

  it('a file larger than maxFileSize is cut to it and marked truncated (tokens of what is given)', async () => {
    const big = join(dir, 'big');
    initRepo(big, { 'AGENTS.md': 'word '.repeat(100) + 'é'.repeat(10) });
    const { registry } = await registryWith(big, { instructions: { maxFileSize: 103 } });
    const svc = new ContextService({ registry, inventory: new FsFileInventory(), tokens: wordTokens });
    const c = await svc.assemble({ project: 'local/api', view: 'default', goal: 'x' });
    const [f] = c.instructions;
    assert.equal(f?.truncated, true);
    assert.equal(f?.bytes, 520);
    assert.equal(c.instructionFragments[0]?.text, 'word '.repeat(20) + 'wor');
    assert.equal(f?.tokens, 21);
    assert.match(fragmentsText(c, 'x'), /\[truncated: only the first part of its 520 bytes is shown\]/);
    const sim = await svc.simulate({ project: 'local/api', goal: 'x' }, LOCAL_PRINCIPAL);
    assert.deepEqual(
      sim.instructions.map((i) => [i.path, i.tokens, i.truncated]),
      [['AGENTS.md', 26, true]],
      'a dry run estimates from the size (103 bytes, 4 a token)',
    );
  });

  it('a view sets instruction fields one by one; the others come from the view it inherits from', async () => {
    const { svc } = await service({
      instructions: { files: ['docs/STYLE.md'], maxTokens: 50 },
      views: { execute: { instructions: { maxTokens: 7 } } },
    });
    const shown = await svc.show({ project: 'local/api', view: 'execute' }, LOCAL_PRINCIPAL);
    assert.deepEqual(shown.views[0]?.settings.instructions, {
      files: ['docs/STYLE.md'],
      maxFileSize: 16_384,
      maxTokens: 7,
      enabled: true,
    });
    assert.equal(shown.views[0]?.sources.instructions, 'view:execute');
    // set merges the fields given into the view's own.
    const set = await svc.set(
      { project: 'local/api', view: 'execute', settings: { instructions: { maxFileSize: 100 } } },
      LOCAL_PRINCIPAL,
    );
    assert.deepEqual(set.views[0]?.settings.instructions, {
      files: ['docs/STYLE.md'],
      maxFileSize: 100,
      maxTokens: 7,
      enabled: true,
    });
  });
});

describe('instruction files: named paths stay inside the resource', () => {
  const refused = (field: string, description: RegExp) => (e: unknown) =>
    e instanceof AppError &&
    e.reason === 'INVALID_PARAMS' &&
    e.fields.some((f) => f.field === field && description.test(f.description));

  it('an action naming ../x or an absolute path is refused by the registry, the field located', async () => {
    const { registry } = await service();
    for (const [path, why] of [
      ['../x.md', /must stay inside the resource \(no \.\.\)/],
      ['docs/../../x.md', /must stay inside the resource/],
      ['/etc/passwd', /must be relative to the resource root, not an absolute path/],
    ] as const)
      await assert.rejects(
        registry.add(
          'action',
          { definition: { name: 'local/bad', descriptionTemplate: 'd', definitionOfDone: 'd', instructions: [path] } },
          LOCAL_PRINCIPAL,
        ),
        refused('instructions[0]', why),
        path,
      );
  });

  it('a project naming one is refused too, by the registry and by context set (nothing written)', async () => {
    const { registry, svc } = await service();
    await assert.rejects(
      registry.add(
        'project',
        {
          definition: {
            name: 'local/bad',
            resources: ['local/api'],
            settings: { context: { instructions: { files: ['../secret.md'] } } },
          },
        },
        LOCAL_PRINCIPAL,
      ),
      refused('settings.context.instructions.files[0]', /no \.\./),
    );
    await assert.rejects(
      svc.set(
        { project: 'local/api', view: 'default', settings: { instructions: { files: ['/etc/passwd'] } } },
        LOCAL_PRINCIPAL,
      ),
      refused('settings.instructions.files.0', /not an absolute path/),
    );
    const shown = await svc.show({ project: 'local/api', view: 'default' }, LOCAL_PRINCIPAL);
    assert.deepEqual(shown.views[0]?.settings.instructions.files, []);
  });
});

describe('instruction files: caching and the snapshot', () => {
  it('a second assembly reads them again only when they changed; the snapshot follows their text', async () => {
    const real = new FsFileInventory();
    const reads: string[] = [];
    const inventory = recordingInventory(real, reads);
    const { svc } = await service(SRC_ONLY, inventory);
    const q = { project: 'local/api', view: 'default' as const, goal: 'parse dates' };
    const first: AssembledContext = await svc.assemble(q);
    assert.ok(reads.includes('AGENTS.md'));
    reads.length = 0;
    const second = await svc.assemble(q);
    assert.ok(!reads.some((p) => p.endsWith('AGENTS.md')), reads.join(', '));
    assert.equal(second.snapshot, first.snapshot);
    writeFileSync(join(repo, 'AGENTS.md'), 'root rules: use spaces now\n');
    try {
      const third = await svc.assemble(q);
      assert.ok(reads.includes('AGENTS.md'));
      assert.notEqual(third.snapshot, first.snapshot);
      assert.match(fragmentsText(third, 'x'), /use spaces now/);
    } finally {
      writeFileSync(join(repo, 'AGENTS.md'), FILES['AGENTS.md']);
    }
  });
});
