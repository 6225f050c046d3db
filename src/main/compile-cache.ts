/**
 * Node's module compile cache for the CLI and its local agent: V8's code cache of every module
 * they load, kept on disk, so that a command does not compile the same ~3 MB of bundle again. The
 * CLI and its agent each compile ~60 ms of JavaScript at start without it (`--cpu-prof`,
 * `compileSourceTextModule`); with it `agents health` took 210 ms instead of 294 ms.
 *
 * The cache is an optimisation only: whatever goes wrong (no home, a read-only or foreign
 * directory, a file system error), the command runs as it would without it and says nothing.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import nodeModule from 'node:module';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/** What {@link startCompileCache} did, for tests and `--verbose` diagnostics. */
export type CompileCacheOutcome =
  | { status: 'enabled'; directory: string }
  | { status: 'skipped'; reason: string }
  | { status: 'failed'; reason: string };

/**
 * Where the cache lives: `$XDG_CACHE_HOME/cleveragents`, else `~/.cache/cleveragents` (the XDG
 * base directory rules: a relative XDG_CACHE_HOME is ignored). Undefined without either.
 */
export function compileCacheDir(env: NodeJS.ProcessEnv, home: string | undefined): string | undefined {
  const xdg = env['XDG_CACHE_HOME'];
  if (xdg && isAbsolute(xdg)) return join(xdg, 'cleveragents');
  if (home && isAbsolute(home)) return join(home, '.cache', 'cleveragents');
  return undefined;
}

export interface CompileCacheDeps {
  /** module.enableCompileCache; absent on a Node without it. */
  enable?: ((dir: string) => { status: number; message?: string; directory?: string }) | undefined;
  home?: string | undefined;
  /** This process's user id (undefined where there are none, on Windows). */
  uid?: number | undefined;
}

/**
 * Enables the compile cache in {@link compileCacheDir}, unless NODE_DISABLE_COMPILE_CACHE is set
 * (Node's own switch) or NODE_COMPILE_CACHE names another directory (Node enabled that one
 * already). Creates the directory (mode 0700) when it is missing. Never throws.
 */
export function startCompileCache(
  env: NodeJS.ProcessEnv = process.env,
  deps: CompileCacheDeps = {},
): CompileCacheOutcome {
  try {
    if (env['NODE_DISABLE_COMPILE_CACHE']) return { status: 'skipped', reason: 'NODE_DISABLE_COMPILE_CACHE is set' };
    if (env['NODE_COMPILE_CACHE']) return { status: 'skipped', reason: 'NODE_COMPILE_CACHE chose the directory' };
    const enable = 'enable' in deps ? deps.enable : nodeModule.enableCompileCache;
    if (typeof enable !== 'function') return { status: 'skipped', reason: 'this Node has no compile cache' };
    const dir = compileCacheDir(env, 'home' in deps ? deps.home : safeHomedir());
    if (!dir) return { status: 'skipped', reason: 'no cache directory (neither XDG_CACHE_HOME nor a home)' };
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const unsafe = foreignDirectory(dir, 'uid' in deps ? deps.uid : process.getuid?.());
    if (unsafe) return { status: 'skipped', reason: unsafe };
    const r = enable(dir);
    const { ENABLED, ALREADY_ENABLED } = nodeModule.constants.compileCacheStatus;
    if (r.status === ENABLED || r.status === ALREADY_ENABLED)
      return { status: 'enabled', directory: r.directory ?? dir };
    return { status: 'failed', reason: r.message ?? `status ${r.status}` };
  } catch (err) {
    // A read-only or missing parent, a name taken by a file: the command runs uncached.
    return { status: 'failed', reason: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Why `dir` must not hold our cache, or undefined. The cache holds compiled code this process will
 * run: a directory another user can write to (theirs, shared, or a symlink they planted) could
 * hand us theirs.
 */
function foreignDirectory(dir: string, uid: number | undefined): string | undefined {
  const st = lstatSync(dir);
  if (st.isSymbolicLink()) return `${dir} is a symbolic link`;
  if (!st.isDirectory()) return `${dir} is not a directory`;
  if (uid === undefined) return undefined;
  if (st.uid !== uid) return `${dir} belongs to another user`;
  if ((st.mode & 0o022) !== 0) return `${dir} is writable by other users`;
  return undefined;
}

function safeHomedir(): string | undefined {
  try {
    return homedir();
  } catch {
    return undefined;
  }
}
