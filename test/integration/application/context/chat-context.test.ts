/**
 * ContextService.chatContext on a generated 400-file git repository, with the real inventory and
 * the real o200k token counter: the map's content and ranking, its budget, the instruction files,
 * `full` as the turn had it before, and what a second turn costs.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ContextService } from '../../../../src/application/context/context.service.ts';
import { fragmentsText } from '../../../../src/application/context/context.types.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import { FsFileInventory, GptTokenCounter } from '../../../../src/infrastructure/index.ts';
import { initRepo } from '../../../support/git.ts';
import { recordingInventory, registryWith } from './support.ts';

const AREAS = ['accounts', 'catalog', 'shipping', 'search', 'reports', 'auth', 'media', 'orders', 'support', 'admin'];

/** 400 files: 10 areas of 36 TypeScript modules and 3 Python ones, a billing area, docs and instruction files. */
function project(): Record<string, string> {
  const files: Record<string, string> = {
    'AGENTS.md': 'Run npm test before you finish. Never edit generated files.\n',
    'src/billing/AGENTS.md': 'Money is in integer cents in this folder.\n',
    'src/billing/invoice.ts': [
      "import { roundCents } from './rounding.js';",
      'export interface InvoiceLine { cents: number }',
      'export function computeInvoiceTotal(lines: InvoiceLine[]): number {',
      '  return roundCents(lines.reduce((n, l) => n + l.cents, 0));',
      '}',
      'export class InvoiceFormatter {}',
      '',
    ].join('\n'),
    'src/billing/rounding.ts': 'export function roundCents(n: number): number {\n  return Math.round(n);\n}\n',
    'scripts/invoice_export.py':
      'EXPORT_DIR = "out"\n\ndef export_invoices(rows):\n    return rows\n\nclass InvoiceWriter:\n    pass\n',
    'README.md': '# Shop\n',
  };
  for (const area of AREAS) {
    for (let n = 0; n < 36; n++) {
      const name = `${area}-handler-${String(n).padStart(2, '0')}`;
      const Cap = `${area[0]?.toUpperCase()}${area.slice(1)}Handler${n}`;
      files[`src/${area}/${name}.ts`] = [
        `export interface ${Cap}Options { verbose: boolean }`,
        `export class ${Cap} {}`,
        `export function create${Cap}(options: ${Cap}Options): ${Cap} {`,
        `  return new ${Cap}();`,
        '}',
        `export function validate${Cap}Request(body: unknown): boolean {`,
        '  return body !== null;',
        '}',
        `export const ${area.toUpperCase()}_${n}_LIMIT = ${n};`,
        '',
      ].join('\n');
    }
    for (let n = 0; n < 3; n++)
      files[`tools/${area}/${area}_task_${n}.py`] =
        `def run_${area}_${n}(args):\n    return args\n\nclass ${area}Task${n}:\n    pass\n`;
  }
  for (let n = 0; n < Object.keys(files).length && Object.keys(files).length < 400; n++)
    files[`docs/page-${String(n).padStart(3, '0')}.md`] = `# Page ${n}\n`;
  return files;
}

const FILES = project();
const GOAL = 'the invoice total is off by a cent: fix the rounding';
const tokens = new GptTokenCounter();

let dir: string;
let repo: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'ca-chat-context-'));
  repo = join(dir, 'shop');
  initRepo(repo, FILES);
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function service(reads: string[] = []) {
  const { registry } = await registryWith(repo);
  return new ContextService({ registry, inventory: recordingInventory(new FsFileInventory(), reads), tokens });
}

describe('ContextService.chatContext, map', () => {
  it('gives the instruction files and a ranked map within 5% of a 200k window and 8,000 tokens', async () => {
    assert.equal(Object.keys(FILES).length, 400);
    const svc = await service();
    const c = await svc.chatContext({ project: 'local/api', goal: GOAL, mode: 'map', modelWindow: 200_000 });
    assert.equal(c.tokens, await tokens.count(c.text), 'the tokens are those of the text');
    assert.ok(c.tokens <= 8_000 && c.tokens <= 200_000 * 0.05, `${c.tokens} tokens`);
    assert.ok(c.tokens > 4_000, `the map uses its room (${c.tokens} tokens)`);
    assert.equal(c.snapshot, undefined);
    // The two instruction files are given (not files of the map): 398 files remain.
    assert.deepEqual(c.map, { files: 398, shown: 398 });
    assert.match(c.text, /=== AGENTS\.md \(local\/api, root\) ===\nRun npm test before you finish/);
    assert.match(
      c.text,
      /=== src\/billing\/AGENTS\.md \(local\/api, folder of src\/billing\/invoice\.ts\) ===\nMoney is/,
    );
    assert.match(
      c.text,
      /read files with the read tool \(line ranges\), search their text with grep, find files with glob or list/,
    );
    // The files the message's words rank first have their symbols; the tree names each folder once.
    assert.match(
      c.text,
      /\nsrc\/billing\/\n {2}invoice\.ts: interface InvoiceLine; function computeInvoiceTotal; class InvoiceFormatter\n {2}rounding\.ts: function roundCents\n/,
    );
    assert.match(
      c.text,
      /\nscripts\/\n {2}invoice_export\.py: const EXPORT_DIR; function export_invoices; class InvoiceWriter\n/,
    );
    assert.equal(c.text.match(/^src\/orders\/$/gm)?.length, 1);
    const withSymbols = c.text.split('\n').filter((l) => /^ {2}\S+: /.test(l)).length;
    assert.ok(withSymbols > 20 && withSymbols < 398, `${withSymbols} files with symbols`);
    assert.match(
      c.text,
      /398 files; the \d+ most relevant to this message with their top-level symbols, \d+ more by path/,
    );
    assert.match(c.text, /\n {2}support-handler-35\.ts\n/, 'a low-ranked file by path only');
    assert.doesNotMatch(c.text, /more files: use glob or grep/);
  });

  it('names the files beyond the budget by path, then counts the rest', async () => {
    const svc = await service();
    const c = await svc.chatContext({ project: 'local/api', goal: GOAL, mode: 'map', modelWindow: 40_000 });
    assert.ok(c.tokens <= 2_000, `${c.tokens} tokens`);
    assert.equal(c.tokens, await tokens.count(c.text));
    const map = c.map as { files: number; shown: number };
    assert.equal(map.files, 398);
    assert.ok(map.shown > 30 && map.shown < 398, `${map.shown} shown`);
    assert.ok(c.text.endsWith(`… and ${398 - map.shown} more files: use glob or grep to find them.`));
    assert.match(c.text, /invoice\.ts: interface InvoiceLine/, 'the best-ranked file keeps its symbols');
    // Names the folder instruction files it could not give.
    const tiny = await svc.chatContext({ project: 'local/api', goal: 'hello', mode: 'map', modelWindow: 8_192 });
    assert.ok(tiny.tokens <= 409, `${tiny.tokens} tokens`);
    assert.match(
      tiny.text,
      /Instruction files not given here \(read the one nearest a file before you change it\): src\/billing\/AGENTS\.md\./,
    );
  });

  it('reads no file again on a second turn, and sees an edit on the next', async () => {
    const reads: string[] = [];
    const svc = await service(reads);
    const first = await svc.chatContext({ project: 'local/api', goal: GOAL, mode: 'map', modelWindow: 200_000 });
    assert.ok(reads.length > 100, `${reads.length} files read on the first turn`);
    reads.length = 0;
    const second = await svc.chatContext({ project: 'local/api', goal: GOAL, mode: 'map', modelWindow: 200_000 });
    assert.deepEqual(reads, []);
    assert.equal(second.text, first.text);
    writeFileSync(
      join(repo, 'src/billing/rounding.ts'),
      'export function roundCents(n: number): number {\n  return Math.round(n);\n}\nexport const HALF_CENT = 0.5;\n',
    );
    try {
      const third = await svc.chatContext({ project: 'local/api', goal: GOAL, mode: 'map', modelWindow: 200_000 });
      assert.deepEqual(reads, ['src/billing/rounding.ts']);
      assert.match(third.text, /rounding\.ts: function roundCents; const HALF_CENT\n/);
    } finally {
      writeFileSync(join(repo, 'src/billing/rounding.ts'), FILES['src/billing/rounding.ts'] as string);
    }
  });
});

describe('ContextService.chatContext, full', () => {
  it("gives what a turn had before the map: the default view's files for this message", async () => {
    const svc = await service();
    const c = await svc.chatContext({ project: 'local/api', goal: GOAL, mode: 'full', modelWindow: 32_000 });
    const assembled = await svc.assemble({ project: 'local/api', view: 'default', goal: GOAL, modelWindow: 32_000 });
    assert.equal(c.text, fragmentsText(assembled, 'for this message'));
    assert.equal(c.snapshot?.snapshot, assembled.snapshot);
    assert.equal(c.snapshot?.view, 'default');
    assert.equal(c.map, undefined);
    // The files' own counts plus their headings': the text's count within 2% (the seams tokenize apart).
    const exact = await tokens.count(c.text);
    assert.ok(c.tokens > assembled.budget.used, 'the headings count too');
    assert.ok(Math.abs(c.tokens - exact) <= exact * 0.02, `${c.tokens} against ${exact}`);
  });

  it('refuses a mode it does not know, and a project that does not exist', async () => {
    const svc = await service();
    await assert.rejects(
      svc.chatContext({ project: 'local/api', goal: GOAL, mode: 'everything' as 'map' }),
      (e: unknown) =>
        e instanceof AppError &&
        e.reason === 'INVALID_PARAMS' &&
        e.message === 'There is no chat context mode "everything"' &&
        e.fields[0]?.description === 'must be one of map, full',
    );
    await assert.rejects(
      svc.chatContext({ project: 'local/nope', goal: GOAL, mode: 'map' }),
      (e: unknown) => e instanceof AppError && e.reason === 'NOT_FOUND' && e.message === 'No project named local/nope',
    );
  });
});
