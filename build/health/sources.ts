/**
 * The sources `npm run health` reads: every .ts/.tsx file under src/ and test/ (test/fixtures/
 * excepted — those are projects the tests work on, not ours), parsed once into one TypeScript
 * program so that the measures that depend on types (is this expression a `Plan`? is this `delay`
 * a timer?) ask the type checker instead of guessing from text.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';

/** One source file of the project, with where it sits. */
export interface SourceFile {
  /** Path relative to the root, with `/` separators (what the report prints). */
  readonly path: string;
  /** `src` or `test`. */
  readonly area: 'src' | 'test';
  /** The first folder under src/ (`domain`, `application`, …); `''` for src/index.ts and tests. */
  readonly layer: string;
  readonly text: string;
  readonly ast: ts.SourceFile;
}

export interface Sources {
  readonly root: string;
  readonly files: readonly SourceFile[];
  readonly checker: ts.TypeChecker;
}

function walk(dir: string, skipped: ReadonlySet<string>, out: string[]): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!skipped.has(full) && entry.name !== 'node_modules') walk(full, skipped, out);
    } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      out.push(full);
    }
  }
}

/**
 * The project's compiler options (its tsconfig.json when there is one, so that module resolution
 * and `types` match what tsc sees), with nothing emitted.
 */
function compilerOptions(root: string): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.json');
  const base: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    jsx: ts.JsxEmit.ReactJSX,
    allowImportingTsExtensions: true,
    types: [],
  };
  if (!existsSync(configPath)) return { ...base, noEmit: true, skipLibCheck: true };
  const read = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  if (read.error) {
    throw new Error(
      `health: cannot read ${configPath}: ${ts.flattenDiagnosticMessageText(read.error.messageText, '\n')}`,
    );
  }
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root);
  return { ...parsed.options, noEmit: true, incremental: false, skipLibCheck: true };
}

/** Reads and parses the project at `root` (a directory with src/ and test/). */
export function loadSources(root: string): Sources {
  const paths: string[] = [];
  const skipped = new Set([join(root, 'test', 'fixtures')]);
  walk(join(root, 'src'), skipped, paths);
  walk(join(root, 'test'), skipped, paths);
  if (paths.length === 0) throw new Error(`health: no .ts files under ${join(root, 'src')} or ${join(root, 'test')}`);
  const program = ts.createProgram({ rootNames: paths, options: compilerOptions(root) });
  const files = paths.map((full): SourceFile => {
    const path = relative(root, full).split(sep).join('/');
    const ast = program.getSourceFile(full);
    if (!ast) throw new Error(`health: TypeScript did not load ${path}`);
    const [area, layerOrFile] = path.split('/');
    const inSrc = area === 'src';
    const layer = inSrc && layerOrFile !== undefined && !/\.tsx?$/.test(layerOrFile) ? layerOrFile : '';
    return { path, area: inSrc ? 'src' : 'test', layer, text: readFileSync(full, 'utf8'), ast };
  });
  return { root, files, checker: program.getTypeChecker() };
}

/** Calls `visit` on every node of `file`, depth first. */
export function forEachNode(file: ts.SourceFile, visit: (node: ts.Node) => void): void {
  const go = (node: ts.Node): void => {
    visit(node);
    ts.forEachChild(node, go);
  };
  go(file);
}

/** 1-based line of where `node` starts (its first token, not its leading comments). */
export function lineOf(node: ts.Node): number {
  const file = node.getSourceFile();
  return file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
}

/** Lines a node spans, first token to last, both included. */
export function lineSpan(node: ts.Node): number {
  const file = node.getSourceFile();
  const end = file.getLineAndCharacterOfPosition(node.getEnd()).line;
  return end - file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
}

/** Lines of a text as `wc -l` counts them, plus a last line without a newline. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

/** `(x)` → `x`, any depth. */
export function unparen(node: ts.Expression): ts.Expression {
  let n = node;
  while (ts.isParenthesizedExpression(n)) n = n.expression;
  return n;
}
