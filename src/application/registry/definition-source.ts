import { isMap, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { AppError, type FieldViolation } from '../../domain/errors.ts';
import { definitionError } from './definition.errors.ts';

export const MAX_SOURCE_BYTES = 1024 * 1024;

export interface ParsedSource {
  value: unknown;
  /** The 1-based line where a field path is written (or its closest written parent). */
  lineOf(path: ReadonlyArray<PropertyKey>): number | undefined;
  filename: string;
}

/**
 * Parses a YAML or JSON definition file (JSON is YAML), keeping positions so that every problem
 * can be reported as `file:line: field: problem`. Syntax errors, duplicate keys and multiple
 * documents are all reported at once.
 */
export function parseDefinitionSource(text: string, filename = '<definition>'): ParsedSource {
  if (Buffer.byteLength(text, 'utf8') > MAX_SOURCE_BYTES) {
    throw new AppError('INVALID_PARAMS', `${filename} is larger than ${MAX_SOURCE_BYTES} bytes`, {
      fields: [{ field: 'source.text', description: `at most ${MAX_SOURCE_BYTES} bytes`, file: filename }],
    });
  }
  const lineCounter = new LineCounter();
  const doc: Document = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false, strict: true });
  const problems: FieldViolation[] = [...doc.errors, ...doc.warnings].map((e) => {
    const line = e.linePos?.[0]?.line;
    const v: FieldViolation = { field: '(syntax)', description: e.message.split('\n')[0] ?? e.message, file: filename };
    if (line !== undefined) v.line = line;
    return v;
  });
  if (problems.length > 0) throw definitionError(filename, problems);
  const value: unknown = doc.toJS({ maxAliasCount: 50 });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw definitionError(filename, [
      { field: '(document)', description: 'a definition is a mapping of fields (name: …, …)', file: filename, line: 1 },
    ]);
  }
  const lineOf = (path: ReadonlyArray<PropertyKey>): number | undefined => {
    let node: unknown = doc.contents;
    let last: Node | undefined = doc.contents ?? undefined;
    for (const key of path) {
      if (isMap(node)) {
        const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === key);
        if (!pair) break;
        last = (pair.key as Node | null) ?? last;
        node = pair.value;
      } else if (isSeq(node) && typeof key === 'number') {
        node = node.items[key];
      } else break;
      if (node && typeof node === 'object' && 'range' in node) last = node as Node;
    }
    const offset = last?.range?.[0];
    return offset === undefined ? undefined : lineCounter.linePos(offset).line;
  };
  return { value, lineOf, filename };
}
