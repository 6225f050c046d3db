/**
 * How long `text.replace(re, template)` would be, worked out one match at a time without building
 * it. A replacement can grow a 5 MB file into hundreds of megabytes (`$'` or a lookahead capture
 * per position); V8 builds such a result in one allocation, and one allocation past a worker's
 * heap limit aborts the whole process instead of ending the worker. So the size is checked first.
 */

/** One piece of a replacement template, as String.prototype.replace reads it (GetSubstitution). */
type Piece =
  | { kind: 'text'; length: number }
  | { kind: 'match' | 'before' | 'after' }
  | { kind: 'group'; n: number; orDigit: boolean }
  | { kind: 'named'; name: string };

/** The template's pieces, for a pattern with `groups` numbered captures and (or not) named ones. */
function pieces(template: string, groups: number, named: boolean): Piece[] {
  const out: Piece[] = [];
  let text = 0;
  const flush = (): void => {
    if (text > 0) out.push({ kind: 'text', length: text });
    text = 0;
  };
  for (let i = 0; i < template.length; i++) {
    const next = template[i + 1];
    if (template[i] !== '$' || next === undefined) {
      text++;
      continue;
    }
    const two = /^\d\d$/.test(template.slice(i + 1, i + 3)) ? Number(template.slice(i + 1, i + 3)) : 0;
    const one = /\d/.test(next) ? Number(next) : 0;
    const close = next === '<' && named ? template.indexOf('>', i + 2) : -1;
    let piece: Piece | undefined;
    let used = 2;
    if (next === '$') text++;
    else if (next === '&') piece = { kind: 'match' };
    else if (next === '`') piece = { kind: 'before' };
    else if (next === "'") piece = { kind: 'after' };
    else if (two >= 1 && two <= groups) [piece, used] = [{ kind: 'group', n: two, orDigit: false }, 3];
    else if (one >= 1 && one <= groups) piece = { kind: 'group', n: one, orDigit: false };
    else if (close >= 0) [piece, used] = [{ kind: 'named', name: template.slice(i + 2, close) }, close - i + 1];
    else used = 1;
    if (used === 1) text++;
    else if (piece) {
      flush();
      out.push(piece);
    } else if (next !== '$') text += used;
    i += used - 1;
  }
  flush();
  return out;
}

/** The number of matches of a global `re` in `text`, and the length of the text they are replaced in. */
export function replacedLength(text: string, re: RegExp, template: string): { count: number; length: number } {
  let count = 0;
  let length = text.length;
  let parsed: Piece[] | undefined;
  for (const m of text.matchAll(re)) {
    count++;
    parsed ??= pieces(template, m.length - 1, m.groups !== undefined);
    const start = m.index;
    const end = start + m[0].length;
    length -= m[0].length;
    for (const p of parsed) {
      if (p.kind === 'text') length += p.length;
      else if (p.kind === 'match') length += m[0].length;
      else if (p.kind === 'before') length += start;
      else if (p.kind === 'after') length += text.length - end;
      else if (p.kind === 'group') length += m[p.n]?.length ?? 0;
      else if (p.kind === 'named') length += m.groups?.[p.name]?.length ?? 0;
    }
  }
  return { count, length };
}
