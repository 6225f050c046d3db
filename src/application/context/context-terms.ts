/**
 * Words and names for ranking: the terms of a goal, the words of a path, the files a text names
 * (imports, requires, path-like words). Plain functions over strings; the weights live in
 * context-ranking.ts.
 */

/** Words too common in goals to say anything about a file. */
const STOPWORDS = new Set(
  (
    'the and for with from into this that these those when then than not are was were has have had ' +
    'should would could will can its add fix make update change use using implement please also all ' +
    'any some new file files code'
  ).split(' '),
);

const MIN_TERM = 3;

/** A crude stem (parse, parsing, parser, parsed → pars; tests → test; dates → dat), so that word forms meet. */
export function stem(word: string): string {
  let w = word;
  for (const suffix of ['ings', 'ing', 'ers', 'er', 'ed', 's']) {
    if (w.endsWith(suffix) && w.length - suffix.length >= MIN_TERM) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  return w.endsWith('e') && w.length > MIN_TERM ? w.slice(0, -1) : w;
}

/** Lower-case words of an identifier-ish text: split on non-alphanumerics and camelCase humps. */
export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= MIN_TERM);
}

/** The distinct stems of a goal's words, stopwords left out, in order of appearance. */
export function goalTerms(goal: string): string[] {
  const out: string[] = [];
  for (const w of words(goal)) {
    if (STOPWORDS.has(w)) continue;
    const s = stem(w);
    if (!out.includes(s)) out.push(s);
  }
  return out.slice(0, 32);
}

/** The stems of a path's file name (extension dropped) and of its directories. */
export function pathStems(path: string): { name: string[]; dirs: string[] } {
  const slash = path.lastIndexOf('/');
  return { name: nameStems(path.slice(slash + 1)), dirs: slash < 0 ? [] : dirStems(path.slice(0, slash)) };
}

export function nameStems(base: string): string[] {
  const dot = base.lastIndexOf('.');
  return [...new Set(words(dot > 0 ? base.slice(0, dot) : base).map(stem))];
}

export function dirStems(dir: string): string[] {
  return [...new Set(words(dir).map(stem))];
}

/** How often a stem starts a word in the text (at most `cap`). */
export function occurrences(lowerText: string, stemmed: string, cap: number): number {
  let n = 0;
  for (let at = lowerText.indexOf(stemmed); at !== -1 && n < cap; at = lowerText.indexOf(stemmed, at + 1)) {
    const before = at === 0 ? '' : lowerText.charAt(at - 1);
    if (before === '' || !/[a-z0-9]/.test(before)) n++;
  }
  return n;
}

const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+|@import\s+)["'`]([^"'`\n]{1,300})["'`]/g;
const PY_IMPORT = /^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import|import[ \t]+([\w.]+))/gm;
const INCLUDE = /^[ \t]*#[ \t]*include[ \t]+"([^"\n]{1,300})"/gm;
// Bounded repetitions: a long run of dots and word characters (minified code, data) cannot make it backtrack for long.
const PATH_LIKE =
  /(?<![\w/.-])((?:\.{1,2}\/)?(?:[\w@-][\w.@-]{0,100}\/){0,16}[\w-][\w.-]{0,100}\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/-])/g;
/** Only the start of a long text is searched for names. */
const SCANNED = 128 * 1024;

export interface NamedRef {
  /** As written (`./date.js`, `src/parse.ts`, `pkg.mod`). */
  spec: string;
  /** `import`: a module specifier; `python`: a dotted module; `path`: a path-like word. */
  kind: 'import' | 'python' | 'path';
}

/** The files a text names (in its first 128 KiB), at most `cap` distinct ones. */
export function namedRefs(text: string, cap = 200): NamedRef[] {
  const seen = new Set<string>();
  const out: NamedRef[] = [];
  const add = (spec: string | undefined, kind: NamedRef['kind']): void => {
    if (spec === undefined || spec === '' || out.length >= cap || seen.has(`${kind}:${spec}`)) return;
    seen.add(`${kind}:${spec}`);
    out.push({ spec, kind });
  };
  const head = text.length > SCANNED ? text.slice(0, SCANNED) : text;
  for (const m of head.matchAll(IMPORT)) add(m[1], 'import');
  for (const m of head.matchAll(INCLUDE)) add(m[1], 'import');
  for (const m of head.matchAll(PY_IMPORT)) add(m[1] ?? m[2], 'python');
  for (const m of head.matchAll(PATH_LIKE)) add(m[1], 'path');
  return out;
}

/** Extensions an import may leave out or write as `.js` for a `.ts` file. */
export const SOURCE_EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs', '.json', '.py'];

/** POSIX-normalises `dir/spec`; undefined when it climbs above the root. */
export function joinRelative(dir: string, spec: string): string | undefined {
  const parts = dir === '' ? [] : dir.split('/');
  for (const seg of spec.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(seg);
  }
  return parts.join('/');
}

/** The paths a module specifier may mean, best first (`x.js` → `x.js`, `x.ts`, …; `x` → `x.ts`, `x/index.ts`, …). */
export function moduleCandidates(p: string): string[] {
  const out = [p];
  const dot = p.lastIndexOf('.');
  const stemmed = dot > p.lastIndexOf('/') ? p.slice(0, dot) : p;
  for (const ext of SOURCE_EXTENSIONS) out.push(stemmed + ext, `${p}${ext}`, `${p}/index${ext}`);
  return [...new Set(out)];
}

/** File extensions that are binary whatever their bytes (simulate reads nothing, so it goes by these). */
export const BINARY_EXTENSIONS = new Set(
  (
    'png jpg jpeg gif bmp ico webp tif tiff psd pdf zip gz tgz bz2 xz 7z rar zst jar war ear class so dylib dll ' +
    'exe bin o a lib obj woff woff2 ttf otf eot mp3 mp4 m4a mov avi mkv webm wav flac ogg sqlite sqlite3 db ' +
    'wasm pyc pyo node dat pack idx'
  ).split(' '),
);

export function hasBinaryExtension(path: string): boolean {
  const dot = path.lastIndexOf('.');
  if (dot <= path.lastIndexOf('/') + 1 || path.length - dot > 9) return false; // no extension, a dot-file, or a long one
  const ext = path.slice(dot + 1);
  return BINARY_EXTENSIONS.has(ext) || (/[A-Z]/.test(ext) && BINARY_EXTENSIONS.has(ext.toLowerCase()));
}
