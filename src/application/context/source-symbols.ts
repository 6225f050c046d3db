/**
 * The top-level symbols of a source file, for the repository map: functions, classes, interfaces,
 * types, constants and exported names, found by simple patterns over the lines. No parser: a map
 * only has to tell the model where to look, and a few misses cost it one grep, while a parser per
 * language would cost a dependency each. "Top level" is told by indentation (a declaration at
 * column 0; for Java-like languages, a type at any depth and a member one level in), which is what
 * formatters produce; code inside template strings or block comments may rarely be taken for one.
 */

export type SymbolKind =
  | 'function'
  | 'class'
  | 'interface'
  | 'type'
  | 'enum'
  | 'const'
  | 'var'
  | 'export'
  | 'struct'
  | 'trait'
  | 'impl'
  | 'module'
  | 'method'
  | 'macro';

export interface SourceSymbol {
  kind: SymbolKind;
  name: string;
}

interface Pattern {
  re: RegExp;
  kind: SymbolKind;
}

/** A language: its extensions and its line patterns (group 1 the name; `names` for `export { a, b }`). */
interface Language {
  name: string;
  exts: readonly string[];
  patterns: readonly Pattern[];
  /** `export { a, b as c }` lists (TS/JS). */
  exportLists?: boolean;
}

const ID = String.raw`([A-Za-z_$][\w$]*)`;

const TS_JS: Language = {
  name: 'typescript',
  exts: ['ts', 'tsx', 'mts', 'cts', 'js', 'jsx', 'mjs', 'cjs'],
  exportLists: true,
  patterns: [
    {
      re: new RegExp(String.raw`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\s*\*?\s*${ID}`),
      kind: 'function',
    },
    {
      re: new RegExp(String.raw`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\s+${ID}`),
      kind: 'class',
    },
    { re: new RegExp(String.raw`^(?:export\s+)?(?:declare\s+)?interface\s+${ID}`), kind: 'interface' },
    { re: new RegExp(String.raw`^(?:export\s+)?(?:declare\s+)?type\s+${ID}\s*(?:<[^=]*>)?\s*=`), kind: 'type' },
    { re: new RegExp(String.raw`^(?:export\s+)?(?:declare\s+)?(?:const\s+)?enum\s+${ID}`), kind: 'enum' },
    { re: new RegExp(String.raw`^(?:export\s+)?(?:declare\s+)?(?:namespace|module)\s+${ID}`), kind: 'module' },
    { re: new RegExp(String.raw`^(?:export\s+)?(?:declare\s+)?const\s+${ID}`), kind: 'const' },
    { re: new RegExp(String.raw`^export\s+(?:declare\s+)?(?:let|var)\s+${ID}`), kind: 'var' },
    { re: /^export\s+default\s+(?!function|class|abstract|async)/, kind: 'export' },
  ],
};

const PYTHON: Language = {
  name: 'python',
  exts: ['py', 'pyi'],
  patterns: [
    { re: new RegExp(String.raw`^(?:async\s+)?def\s+${ID}`), kind: 'function' },
    { re: new RegExp(String.raw`^class\s+${ID}`), kind: 'class' },
    // Module constants by convention (UPPER_CASE); other assignments are rarely an interface.
    { re: /^([A-Z][A-Z0-9_]*)\s*(?::[^=]*)?=(?!=)/, kind: 'const' },
  ],
};

const GO: Language = {
  name: 'go',
  exts: ['go'],
  patterns: [
    // A method is shown with its receiver's type: `func (r *Repo) Get` → Repo.Get.
    { re: /^func\s+\(\s*(?:\w+\s+)?\*?\s*([A-Za-z_]\w*)(?:\[[^\]]*\])?\s*\)\s*([A-Za-z_]\w*)/, kind: 'method' },
    { re: /^func\s+([A-Za-z_]\w*)/, kind: 'function' },
    { re: /^type\s+([A-Za-z_]\w*)\s+struct\b/, kind: 'struct' },
    { re: /^type\s+([A-Za-z_]\w*)\s+interface\b/, kind: 'interface' },
    { re: /^type\s+([A-Za-z_]\w*)/, kind: 'type' },
    { re: /^const\s+([A-Za-z_]\w*)/, kind: 'const' },
    { re: /^var\s+([A-Za-z_]\w*)/, kind: 'var' },
  ],
};

const RUST_VIS = String.raw`^(?:pub(?:\([^)]*\))?\s+)?`;
const RUST: Language = {
  name: 'rust',
  exts: ['rs'],
  patterns: [
    {
      re: new RegExp(String.raw`${RUST_VIS}(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+(\w+)`),
      kind: 'function',
    },
    { re: new RegExp(String.raw`${RUST_VIS}struct\s+(\w+)`), kind: 'struct' },
    { re: new RegExp(String.raw`${RUST_VIS}enum\s+(\w+)`), kind: 'enum' },
    { re: new RegExp(String.raw`${RUST_VIS}(?:unsafe\s+)?trait\s+(\w+)`), kind: 'trait' },
    { re: new RegExp(String.raw`${RUST_VIS}type\s+(\w+)`), kind: 'type' },
    { re: new RegExp(String.raw`${RUST_VIS}(?:const|static)\s+(?:mut\s+)?(\w+)`), kind: 'const' },
    { re: new RegExp(String.raw`${RUST_VIS}mod\s+(\w+)`), kind: 'module' },
    { re: /^macro_rules!\s*(\w+)/, kind: 'macro' },
    // `impl<T> Trait for Type` → Type: Trait; `impl Type` → Type.
    { re: /^(?:unsafe\s+)?impl(?:<[^>]*>)?\s+([\w:]+(?:<[^>]*>)?(?:\s+for\s+[\w:]+)?)/, kind: 'impl' },
  ],
};

const MODIFIERS = String.raw`(?:(?:public|protected|private|internal|static|final|abstract|sealed|partial|open|data|inline|override|suspend|async|virtual|readonly|synchronized|native|default|strictfp)\s+)*`;
/** Java, C#, Kotlin, Scala, Swift, Dart: types at any depth (they nest in namespaces), members one level in. */
const JAVA_LIKE: Language = {
  name: 'java',
  exts: ['java', 'cs', 'kt', 'kts', 'scala', 'swift', 'dart'],
  patterns: [
    {
      re: new RegExp(String.raw`^\s{0,8}${MODIFIERS}(?:class|record|object|struct|actor|extension|trait)\s+(\w+)`),
      kind: 'class',
    },
    { re: new RegExp(String.raw`^\s{0,8}${MODIFIERS}(?:interface|protocol|@interface)\s+(\w+)`), kind: 'interface' },
    { re: new RegExp(String.raw`^\s{0,8}${MODIFIERS}enum(?:\s+class)?\s+(\w+)`), kind: 'enum' },
    { re: new RegExp(String.raw`^${MODIFIERS}(?:fun|func|def)\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?(\w+)`), kind: 'function' },
    // A public member one level in (4 spaces or a tab): `public Foo bar(` → method bar.
    { re: /^(?: {4}|\t)(?:@\w+\s+)*(?:public|protected)\b[^(=;]*?\b(\w+)\s*\(/, kind: 'method' },
    {
      re: /^(?: {4}|\t)(?:public\s+|open\s+|internal\s+)?(?:override\s+)?(?:suspend\s+)?(?:fun|func)\s+(?:<[^>]*>\s*)?(\w+)/,
      kind: 'method',
    },
  ],
};

const C_LIKE: Language = {
  name: 'c',
  exts: ['c', 'h', 'cc', 'cpp', 'cxx', 'hpp', 'hh', 'hxx', 'm', 'mm'],
  patterns: [
    { re: /^#\s*define\s+([A-Za-z_]\w*)/, kind: 'macro' },
    { re: /^(?:typedef\s+)?(?:struct|union)\s+([A-Za-z_]\w*)\s*(?:\{|$)/, kind: 'struct' },
    { re: /^(?:typedef\s+)?enum\s+(?:class\s+)?([A-Za-z_]\w*)/, kind: 'enum' },
    { re: /^(?:template\s*<[^>]*>\s*)?class\s+([A-Za-z_]\w*)(?!\s*;)/, kind: 'class' },
    { re: /^namespace\s+([A-Za-z_][\w:]*)/, kind: 'module' },
    { re: /^typedef\s+[^;()]*?\b([A-Za-z_]\w*)\s*;/, kind: 'type' },
    // A definition at column 0: `static int parse_date(const char *s)` with no `;` (a declaration) after it.
    {
      re: /^(?!return\b|else\b|if\b|for\b|while\b|switch\b|typedef\b)[A-Za-z_][\w\s*&:<>,]*?[\s*&]([A-Za-z_][\w:~]*)\s*\([^;]*$/,
      kind: 'function',
    },
  ],
};

const RUBY: Language = {
  name: 'ruby',
  exts: ['rb'],
  patterns: [
    { re: /^\s{0,2}class\s+([A-Z][\w:]*)/, kind: 'class' },
    { re: /^\s{0,2}module\s+([A-Z][\w:]*)/, kind: 'module' },
    { re: /^\s{0,4}def\s+((?:self\.)?[\w?!=]+)/, kind: 'function' },
  ],
};

const PHP: Language = {
  name: 'php',
  exts: ['php'],
  patterns: [
    { re: /^(?:abstract\s+|final\s+|readonly\s+)*class\s+(\w+)/, kind: 'class' },
    { re: /^interface\s+(\w+)/, kind: 'interface' },
    { re: /^trait\s+(\w+)/, kind: 'trait' },
    { re: /^enum\s+(\w+)/, kind: 'enum' },
    { re: /^function\s+(\w+)/, kind: 'function' },
    { re: /^(?: {4}|\t)(?:abstract\s+|final\s+)?public\s+(?:static\s+)?function\s+(\w+)/, kind: 'method' },
  ],
};

const LANGUAGES: readonly Language[] = [TS_JS, PYTHON, GO, RUST, JAVA_LIKE, C_LIKE, RUBY, PHP];
const BY_EXT = new Map<string, Language>(LANGUAGES.flatMap((l) => l.exts.map((e) => [e, l] as const)));

/** The language of a path by its extension (undefined: not a source file the map reads). */
export function languageOf(path: string): string | undefined {
  return langOf(path)?.name;
}

function langOf(path: string): Language | undefined {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  if (dot <= 0) return undefined;
  // Declarations and minified bundles say little a map could use.
  if (/\.min\.[cm]?js$/.test(base)) return undefined;
  return BY_EXT.get(base.slice(dot + 1).toLowerCase());
}

/** Longer lines are data or minified code, not declarations. */
const MAX_LINE = 400;

/**
 * The top-level symbols of a file's text, in the order they appear, each name once (at most
 * `cap`). A TS/JS module that exports anything is shown by its exports only; in the other
 * languages the patterns look for public declarations mostly anyway.
 */
export function sourceSymbols(path: string, text: string, cap = 200): SourceSymbol[] {
  const lang = langOf(path);
  if (!lang) return [];
  const out: SourceSymbol[] = [];
  const seen = new Set<string>();
  const add = (kind: SymbolKind, name: string): SourceSymbol | undefined => {
    const key = `${kind}:${name}`;
    if (name === '' || seen.has(key) || out.length >= cap) return undefined;
    seen.add(key);
    const s = { kind, name };
    out.push(s);
    return s;
  };
  let inExportList = false;
  // A module that exports is known by its exports: its other top-level names are its internals.
  const exported = new Set<SourceSymbol>();
  for (const line of text.split('\n')) {
    if (out.length >= cap) break;
    if (line.length === 0 || line.length > MAX_LINE) continue;
    if (lang.exportLists && (inExportList || /^export\s+(?:type\s+)?\{/.test(line))) {
      // `export { a, b as c } from './x'` over one or more lines: the names as exported.
      const body = line.replace(/^export\s+(?:type\s+)?\{/, '');
      const end = body.indexOf('}');
      for (const part of (end >= 0 ? body.slice(0, end) : body).split(',')) {
        const s = add(
          'export',
          (
            part
              .trim()
              .split(/\s+as\s+/)
              .pop() ?? ''
          )
            .replace(/^type\s+/, '')
            .trim(),
        );
        if (s) exported.add(s);
      }
      inExportList = end < 0;
      continue;
    }
    for (const p of lang.patterns) {
      const m = p.re.exec(line);
      if (!m) continue;
      let s: SourceSymbol | undefined;
      if (p.kind === 'export') s = add('export', 'default');
      else if (p.kind === 'method' && lang === GO) s = add('method', `${m[1] ?? ''}.${m[2] ?? ''}`);
      else if (p.kind === 'impl') s = add('impl', (m[1] ?? '').replace(/\s+/g, ' '));
      // Python's leading underscore says "private".
      else if (!(lang === PYTHON && m[1]?.startsWith('_'))) s = add(p.kind, m[1] ?? '');
      if (s && lang.exportLists && line.startsWith('export')) exported.add(s);
      break;
    }
  }
  return exported.size > 0 ? out.filter((s) => exported.has(s)) : out;
}
