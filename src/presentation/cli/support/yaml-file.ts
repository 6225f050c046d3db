/**
 * A YAML settings file read with every node's position, so that a wrong key or value is named
 * `file:line` and a syntax error `file:line:col`: shared by the CLI's `config.yaml` and the
 * server's `--config` file, so both answer the same way.
 */
import { readFileSync } from 'node:fs';
import { isMap, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { UsageError } from '../exit-codes.ts';
import { messageOf } from '../../../protocol/client/index.ts';

/** A parsed settings file: its Document and where each offset is (for `file:line`). */
export interface YamlFile {
  path: string;
  doc: Document;
  lines: LineCounter;
}

export interface ReadYamlOptions {
  /** A missing file is an empty document (else it is an error). */
  missingIsEmpty: boolean;
  /** What the file is, for messages: "the config file". */
  what: string;
  /** The hint of a syntax error. */
  syntaxHint: string;
  /** The keys, listed when the file is not a mapping. */
  keys: readonly string[];
}

/** Reads and parses a settings file; a YAML error names `file:line:col`, a non-mapping `file:line`. */
export function readYamlFile(path: string, opts: ReadYamlOptions): YamlFile {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (!opts.missingIsEmpty || (err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new UsageError(`cannot read ${opts.what} ${path}: ${messageOf(err)}`);
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const first = doc.errors[0];
  if (first) {
    const pos = first.linePos?.[0] ?? lines.linePos(first.pos[0]);
    throw new UsageError(
      `${path}:${pos.line}:${pos.col}: not valid YAML: ${first.message.split('\n')[0] ?? ''}`,
      opts.syntaxHint,
    );
  }
  const file = { path, doc, lines };
  if (doc.contents !== null && !isMap(doc.contents))
    throw new UsageError(
      `${path}:${lineOf(file, doc.contents)}: ${opts.what} must be a mapping of keys (${opts.keys.join(', ')})`,
    );
  return file;
}

/** The line of a node (1-based), or 1 when it has no position. */
export function lineOf(file: YamlFile, node: Node | null | undefined): number {
  const at = node?.range?.[0];
  return at === undefined ? 1 : file.lines.linePos(at).line;
}

/** Levenshtein distance, for "did you mean" (keys are short: the quadratic table is nothing). */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j] ?? 0;
      row[j] = Math.min(cur + 1, (row[j - 1] ?? 0) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length] ?? 0;
}

/** Case, `-` and `_` do not tell keys apart for a suggestion: `database-url` suggests `databaseUrl`. */
const plain = (k: string): string => k.toLowerCase().replace(/[-_]/g, '');

/** `unknown key "x"; valid keys: …`, with "did you mean" when a key is close. */
export function unknownKeyMessage(key: string, keys: readonly string[]): string {
  const close = keys
    .map((k) => ({ k, d: distance(plain(key), plain(k)) }))
    .filter(({ k, d }) => d <= Math.max(1, Math.floor(k.length / 3)))
    .sort((x, y) => x.d - y.d)[0];
  return `unknown key ${JSON.stringify(key)}${close ? ` (did you mean "${close.k}"?)` : ''}; valid keys: ${keys.join(', ')}`;
}
