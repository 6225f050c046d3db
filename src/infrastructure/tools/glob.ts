/**
 * A small glob matcher for tool arguments (`fs.glob` arrived after Node 20): `**` spans any number
 * of directories, `*` and `?` stay within one, `{a,b}` is an alternative, `[…]` a character class.
 * A pattern without `/` matches a file's name at any depth (`*.ts`); one with `/` matches the whole
 * relative path (`src/**\/*.ts`).
 */
export type Matcher = (relPath: string) => boolean;

export function compileGlob(pattern: string): Matcher {
  const p = pattern.replace(/^\.\//, '');
  const re = new RegExp(`^${toRegExp(p)}$`);
  if (!p.includes('/')) return (rel) => re.test(rel.slice(rel.lastIndexOf('/') + 1));
  return (rel) => re.test(rel);
}

/** A file is kept when it matches some include (or there are none) and no exclude. */
export function compileFilter(include: readonly string[] = [], exclude: readonly string[] = []): Matcher {
  const inc = include.map(compileGlob);
  const exc = exclude.map(compileGlob);
  return (rel) => (inc.length === 0 || inc.some((m) => m(rel))) && !exc.some((m) => m(rel));
}

function toRegExp(p: string): string {
  let re = '';
  let depth = 0;
  for (let i = 0; i < p.length; i++) {
    const c = p.charAt(i);
    if (c === '*') {
      if (p.charAt(i + 1) === '*') {
        const slash = p.charAt(i + 2) === '/';
        re += slash ? '(?:.*/)?' : '.*';
        i += slash ? 2 : 1;
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '{') {
      depth++;
      re += '(?:';
    } else if (c === '}' && depth > 0) {
      depth--;
      re += ')';
    } else if (c === ',' && depth > 0) re += '|';
    else if (c === '[') {
      const end = p.indexOf(']', i + 2);
      if (end === -1) re += '\\[';
      else {
        const body = p.slice(i + 1, end).replace(/\\/g, '\\\\');
        re += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
        i = end;
      }
    } else re += c.replace(/[.+^$()|\\\]}]/g, '\\$&');
  }
  return re + ')'.repeat(depth);
}
