/**
 * `npm run bundle`: the CLI bundled by esbuild into dist/src/bundle/, split so that a command
 * loads only what it uses (README, "The CLI"). Run after tsc (`npm run build`).
 *
 * One departure from the sources: zod's locales. `import { z } from 'zod'` is a namespace that
 * carries `z.locales`, so a bundler keeps all 49 of them (300 KB, 18% of what an agent compiles
 * at start) although zod only ever uses English unless told otherwise, and nothing here tells it.
 * The bundle keeps `z.locales.en` and drops the others: every process of the CLI starts ~30 ms
 * cheaper. tsc's output (dist/src/main/bin.js) keeps zod whole.
 *
 * The entry, agents.js (src/main/bin.ts), checks the Node version before the rest loads: it must
 * import no chunk statically, or that chunk would be evaluated first. The build fails if it does.
 */
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { build, type Plugin } from 'esbuild';

const OUT = 'dist/src/bundle';

const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    const en = createRequire(import.meta.url).resolve('zod/v4/locales/en.js');
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer) ? { path: 'zod-locales', namespace: 'zod-en' } : undefined,
    );
    b.onLoad({ filter: /^zod-locales$/, namespace: 'zod-en' }, () => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: dirname(en),
      loader: 'js',
    }));
  },
};

/**
 * The entry's import of the rest becomes `import('./main.js')`, the split bundle's entry: the
 * entry is built on its own, so that it shares no chunk (not even esbuild's runtime helpers).
 */
const restIsMainJs: Plugin = {
  name: 'rest-is-main-js',
  setup(b) {
    b.onResolve({ filter: /^\.\/cli-main\.ts$/ }, () => ({ path: './main.js', external: true }));
  },
};

rmSync(OUT, { recursive: true, force: true });
const result = await build({
  entryPoints: ['src/main/cli-main.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  splitting: true,
  // Whitespace and comments out, names kept: V8 holds each chunk's source, one byte per character
  // once no comment carries a character above U+00FF (README, "The CLI").
  minifyWhitespace: true,
  outdir: OUT,
  entryNames: 'main',
  external: ['better-sqlite3', 'pg-native', 'react-devtools-core'],
  banner: {
    js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
  },
  plugins: [zodEnglishOnly],
  logLevel: 'warning',
  metafile: true,
});
// The plugin must have found zod's locales: a zod that moved them would silently bundle them all.
const inputs = Object.keys(result.metafile.inputs);
if (!inputs.includes('zod-en:zod-locales') || inputs.some((i) => /node_modules\/zod\/v4\/locales\/(?!en\.js)/.test(i)))
  throw new Error('bundle: zod locales other than English are still in the bundle; see build/bundle.ts');

const entry = await build({
  entryPoints: ['src/main/bin.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  // Parsed by whatever Node a user has, so that an old one reaches the version check.
  target: 'node18',
  minifyWhitespace: true,
  outfile: `${OUT}/agents.js`,
  plugins: [restIsMainJs],
  logLevel: 'warning',
  metafile: true,
});
// Only builtins before the version check: anything else would be evaluated first.
const early = Object.values(entry.metafile.outputs).flatMap((o) => o.imports);
const loaded = early.filter((i) => i.kind === 'import-statement' && !i.path.startsWith('node:')).map((i) => i.path);
if (loaded.length > 0 || !early.some((i) => i.kind === 'dynamic-import' && i.path === './main.js'))
  throw new Error(
    `bundle: the entry must import only node: builtins, then ./main.js; it imports ${loaded.join(', ') || 'no ./main.js'}`,
  );

// The regex tools' worker (src/infrastructure/tools/regex-runner.ts) is loaded by path, beside the
// chunks: a file of its own, self-contained, so that a worker starts without the CLI's chunks.
const regexWorker = await build({
  entryPoints: ['src/infrastructure/tools/regex-worker.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minifyWhitespace: true,
  outfile: `${OUT}/regex-worker.js`,
  logLevel: 'warning',
  metafile: true,
});
const workerImports = Object.values(regexWorker.metafile.outputs).flatMap((o) => o.imports);
if (workerImports.some((i) => !i.path.startsWith('node:')))
  throw new Error('bundle: the regex worker must import only node: builtins; see build/bundle.ts');
