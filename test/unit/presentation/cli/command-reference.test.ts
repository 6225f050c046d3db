/**
 * Every `agents …` command that a hint, an error message, the README or docs/ tells a user to run
 * exists: its words lead to a command of the real tree (built by buildProgram, as
 * command-methods.ts does, without serving), and each flag it names is an option of that command
 * or of a command above it (commander reads an ancestor's options anywhere while positional
 * options are off, which the root keeps). Placeholders (`<id>`, `NAME`, `…`, `${…}`) are skipped:
 * where one stands for a subcommand the mention cannot be resolved and is not checked.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import ts from 'typescript';
import { buildProgram } from '../../../../src/presentation/cli/index.ts';

const ROOT = join(import.meta.dirname, '../../../..');

/** A piece of text that may name commands, and where it starts. */
interface Passage {
  file: string;
  line: number;
  text: string;
}

/**
 * Mentions that are prose about commands, not a command to run, each with why. Keyed by the
 * mention as extracted (`agents` and what follows up to where the command ends).
 */
const PROSE: Readonly<Record<string, string>> = {
  'agents plan commands': 'owned-tasks.service: "use the agents plan commands" names the group, not a command',
};

const files = (dir: string, ext: RegExp): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && ext.test(e.name))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));

/** The string literals, template literals (a substitution reads as `${…}`) and JSX text of a source file. */
function sourcePassages(file: string): Passage[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const kind = file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const out: Passage[] = [];
  const visit = (n: ts.Node): void => {
    let s: string | undefined;
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isJsxText(n)) s = n.text;
    else if (ts.isTemplateExpression(n))
      s = n.head.text + n.templateSpans.map((span) => '${…}' + span.literal.text).join('');
    if (s !== undefined && s.includes('agents ')) {
      out.push({ file, line: sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1, text: s });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** The code blocks (continuation lines joined) and code spans of a Markdown file; prose is English, not commands. */
function markdownPassages(file: string): Passage[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const out: Passage[] = [];
  let fence: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const opening = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (opening !== undefined && (fence === undefined || opening.startsWith(fence))) {
      fence = fence === undefined ? opening : undefined;
      continue;
    }
    if (fence !== undefined) {
      let code = line;
      const first = i;
      while (code.endsWith('\\') && i + 1 < lines.length) code = code.slice(0, -1) + ' ' + (lines[++i] ?? '');
      out.push({ file, line: first + 1, text: code });
    } else {
      for (const m of line.matchAll(/(`+)(.+?)\1/g)) out.push({ file, line: i + 1, text: m[2] ?? '' });
    }
  }
  return out;
}

/**
 * Each `agents …` in a passage, cut where the command ends: at a quote of code (backtick), a
 * newline, a shell separator (`;`, `|`, `&&`, ` #`), a bracketed aside, or where the sentence goes on
 * (`, `, `. `, ` or `, ` then `, ` to `, ` once `, `·`).
 */
function mentions(p: Passage): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  for (const m of p.text.matchAll(/(?<![\w./@-])agents (?=[-\w$<[(…])/g)) {
    const rest = p.text.slice(m.index);
    const end = rest.search(/[`\n;·()]|\s\|\s|&&|\s#|,\s|\.(\s|$)|\s(or|then|to|once|and)\s/);
    const line = p.line + (p.text.slice(0, m.index).match(/\n/g)?.length ?? 0);
    out.push({ line, text: (end < 0 ? rest : rest.slice(0, end)).trim() });
  }
  return out;
}

/** Words split at spaces, with a quoted argument kept whole and optional-part brackets dropped. */
const tokens = (command: string): string[] =>
  (command.match(/"[^"]*"|'[^']*'|\S+/g) ?? []).map((t) => t.replace(/^\[+|[\]:,]+$/g, '')).filter((t) => t !== '');

/** A word that stands for a value the user supplies. */
const isPlaceholder = (t: string): boolean => /[<>…${}"']|\.\.\./.test(t) || /^[A-Z][A-Z0-9_-]*$/.test(t);

const lineage = (c: Command): Command[] => (c.parent ? [c, ...lineage(c.parent)] : [c]);

/** Why `words` (what follows `agents`) does not parse against the tree, or undefined when it does. */
function check(root: Command, words: readonly string[]): string | undefined {
  let at = root;
  let inPath = true;
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? '';
    if (w.startsWith('-')) {
      const name = w.split('=')[0] ?? w;
      if (name === '--help' || name === '-h') continue;
      const option = lineage(at)
        .flatMap((c) => c.options)
        .find((o) => o.long === name || o.short === name);
      const where =
        at === root
          ? 'agents'
          : `agents ${lineage(at)
              .reverse()
              .slice(1)
              .map((c) => c.name())
              .join(' ')}`;
      if (!option) return `${where} has no option ${name}`;
      // A value that follows its option is not a subcommand.
      if ((option.required || option.optional) && !w.includes('=')) i++;
      continue;
    }
    if (!inPath) continue;
    if (w === 'help') return undefined;
    const alternatives = w.split('|');
    if (alternatives.length > 1) {
      // `status|tree|explain`: each alternative with the rest of the words.
      for (const alt of alternatives) {
        const why = check(at, [alt, ...words.slice(i + 1)]);
        if (why !== undefined) return why;
      }
      return undefined;
    }
    const sub = at.commands.find((c) => c.name() === w || c.aliases().includes(w));
    if (sub) {
      at = sub;
      continue;
    }
    const takesArguments = at.registeredArguments.length > 0;
    if (isPlaceholder(w)) {
      // A placeholder for a subcommand (`agents ${kind} list`, written once for every registry
      // kind): the rest must parse under at least one of the subcommands it may stand for.
      if (at.commands.length > 0 && !takesArguments) {
        const rest = words.slice(i + 1);
        if (at.commands.some((c) => check(c, rest) === undefined)) return undefined;
        return `no subcommand of ${at === root ? 'agents' : at.name()} takes ${rest.join(' ')}`;
      }
      inPath = false;
      continue;
    }
    if (at.commands.length > 0 && !takesArguments) {
      const name =
        at === root
          ? 'command'
          : `subcommand of ${lineage(at)
              .reverse()
              .slice(1)
              .map((c) => c.name())
              .join(' ')}`;
      return `unknown ${name} "${w}" (there are: ${at.commands.map((c) => c.name()).join(', ')})`;
    }
    inPath = false; // the rest are the command's arguments
  }
  return undefined;
}

describe('the commands that hints and documents name', () => {
  const program = buildProgram({ version: 'test', serve: async () => 0 });
  const passages = [
    ...files('src', /\.tsx?$/).flatMap(sourcePassages),
    ...['README.md', ...files('docs', /\.md$/)].flatMap(markdownPassages),
  ];
  const found = passages.flatMap((p) => mentions(p).map((m) => ({ ...m, file: p.file })));

  it('finds the commands in hints, the README and docs/', () => {
    // The extraction itself can break silently; a few mentions known to be there prove it reads each kind.
    const has = (file: string, text: string): boolean => found.some((m) => m.file === file && m.text.startsWith(text));
    assert.ok(has('src/presentation/cli/support/plan-run.ts', 'agents plan apply ${…}'), 'a template literal');
    assert.ok(has('README.md', 'agents plan execute <plan-id>'), 'a README code block');
    assert.ok(has('docs/registry.md', 'agents '), 'a docs/ page');
  });

  it('names only commands and options that exist', () => {
    const offenders = found
      .filter((m) => !(m.text in PROSE))
      .map((m) => ({ ...m, why: check(program, tokens(m.text).slice(1)) }))
      .filter((m) => m.why !== undefined)
      .map((m) => `${m.file}:${m.line}: \`${m.text}\`: ${m.why}`);
    assert.deepEqual(offenders, []);
  });

  it('refuses a command or an option that does not exist', () => {
    assert.match(check(program, ['task', 'show', 'X']) ?? '', /unknown subcommand of task "show"/);
    assert.match(
      check(program, ['plan', 'apply', 'X', '--automation-profile', 'p']) ?? '',
      /no option --automation-profile/,
    );
    assert.equal(check(program, ['--format', 'json', 'plan', 'use', 'a', 'b', '--automation-profile', 'p']), undefined);
    assert.equal(check(program, ['${…}', 'show', 'X']), undefined);
    assert.match(
      check(program, ['${…}', 'list', '--frobnicate']) ?? '',
      /no subcommand of agents takes list --frobnicate/,
    );
  });

  it('keeps its allowlist to prose that is still there', () => {
    for (const text of Object.keys(PROSE))
      assert.ok(
        found.some((m) => m.text === text),
        `"${text}" is no longer found`,
      );
  });
});
