/**
 * The shadow history of a project directory: snapshots of its files as commits in a git
 * repository of our own, `<base>/<hash of the directory>` (GIT_DIR; its own index, config, refs,
 * attributes and excludes), driven as `git --git-dir=<shadow> --work-tree=<root>`. The user's
 * repository, if there is one, is only read (which of its tracked files its ignore rules match):
 * its refs, index, stash, HEAD and config are never written, and its config never reaches a
 * command that writes (the shadow's does).
 *
 * Nothing a directory or a repository configures runs: every command goes through the hardened
 * runner (git.ts: hooks, fsmonitor, pagers, credential helpers… off; the user's repository's
 * drivers neutralised by git-config-guard.ts), the global and system configuration are not read
 * (GIT_CONFIG_GLOBAL=/dev/null, GIT_CONFIG_NOSYSTEM: an administrator's LFS filter would store
 * pointers, not the bytes), and the shadow's `info/attributes`, which beats every `.gitattributes`,
 * switches off filters, end-of-line conversion and encodings: a snapshot is the files byte for byte.
 *
 * What a snapshot holds: the work tree minus what its `.gitignore` files (and the user's
 * `.git/info/exclude`) skip — node_modules and build output are not copied on every turn — plus
 * the files the user's own git tracks although they match those rules (a committed file under an
 * ignored directory is a file the user cares about). Nested repositories are recorded as git
 * records them (a link to their HEAD), not file by file.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync } from 'node:fs';
import { mkdir, readFile, realpath, rm, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FileHistory, SnapshotDiff } from '../../application/index.ts';
import { GitError, KeyedLock, directGit, splitNul, worktreeFiles, type GitRunner } from './git.ts';

const SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
const KEEP = /^[A-Za-z0-9._-]+(?:\/[A-Za-z0-9._-]+)*$/;
/** The shadow's attributes: no filter, no end-of-line or encoding conversion, no diff/merge driver. */
const ATTRIBUTES = '* -text -filter -ident !eol !working-tree-encoding -diff -merge\n';
/** Settings of the shadow's own config (written once, when it is made). */
const SETTINGS: readonly (readonly [string, string])[] = [
  ['core.bare', 'true'],
  ['core.logAllRefUpdates', 'false'],
  ['core.autocrlf', 'false'],
  ['core.safecrlf', 'false'],
  ['core.symlinks', 'true'],
  // Remembers which directories had no new files: a turn's second snapshot of a big tree reads less.
  ['core.untrackedCache', 'true'],
  ['gc.auto', '0'],
];
const DEFAULT_TIMEOUT_MS = 60_000;
/** A lock another process of ours holds on the shadow's index is waited for this long. */
const LOCK_WAIT_MS = 10_000;

export interface ShadowHistoryOptions {
  /** Where the shadows live, e.g. `<dataDir>/shadow`. */
  base: string;
  /** How long one snapshot, comparison or restore may take (default 60 s). */
  timeoutMs?: number;
  run?: GitRunner;
}

/** A project directory's shadow repository. */
interface Shadow {
  /** The directory, resolved (symbolic links followed). */
  root: string;
  gitDir: string;
}

export class ShadowHistory implements FileHistory {
  readonly #base: string;
  readonly #timeoutMs: number;
  readonly #run: GitRunner;
  /** One operation per shadow at a time in this process (they share its index). */
  readonly #locks = new KeyedLock();
  readonly #ready = new Map<string, Promise<Shadow>>();

  constructor(opts: ShadowHistoryOptions) {
    this.#base = path.resolve(opts.base);
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#run = opts.run ?? directGit;
  }

  snapshot(root: string, keep: string): Promise<string> {
    return this.#locked(root, async (s) => (await this.#snapshot(s, keep)).trim());
  }

  async changedSince(root: string, from: string, keep: string): Promise<SnapshotDiff> {
    checkSha(from);
    return this.#locked(root, async (s) => {
      const snapshot = (await this.#snapshot(s, keep)).trim();
      const out = await this.#git(s, ['diff-tree', '-r', '-z', '--name-only', '--no-renames', from, snapshot]);
      return { snapshot, files: splitNul(out).sort() };
    });
  }

  async differing(root: string, at: string, files: readonly string[]): Promise<string[]> {
    checkSha(at);
    if (files.length === 0) return [];
    return this.#locked(root, async (s) => {
      // The index made to match the files as they are now, then compared with the snapshot.
      await this.#stage(s);
      const out = await this.#git(s, ['diff-index', '--cached', '-z', '--name-only', '--no-renames', at]);
      const now = new Set(splitNul(out));
      return files.filter((f) => now.has(f)).sort();
    });
  }

  async read(root: string, at: string | undefined, files: readonly string[]): Promise<Map<string, string>> {
    if (at !== undefined) checkSha(at);
    const out = new Map<string, string>();
    if (files.length === 0) return out;
    return this.#locked(root, async (s) => {
      // As now: the index made to match the files, read as a snapshot would record them.
      if (at === undefined) await this.#stage(s);
      const listing =
        at === undefined
          ? ['ls-files', '-z', '--cached', '--', ...files]
          : ['ls-tree', '-r', '-z', '--name-only', at, '--', ...files];
      const there = new Set(splitNul(await this.#git(s, listing)));
      for (const f of files) if (there.has(f)) out.set(f, await this.#git(s, ['cat-file', 'blob', `${at ?? ''}:${f}`]));
      return out;
    });
  }

  async restore(root: string, at: string, files: readonly string[]): Promise<void> {
    checkSha(at);
    if (files.length === 0) return;
    return this.#locked(root, async (s) => {
      const inSnapshot = new Set(splitNul(await this.#git(s, ['ls-tree', '-r', '-z', '--name-only', at])));
      const back = files.filter((f) => inSnapshot.has(f));
      const gone = files.filter((f) => !inSnapshot.has(f));
      // Removed first: a file the turn made where a directory of the snapshot has to come back.
      for (const f of gone) await removeInside(s.root, f);
      if (back.length > 0)
        await this.#git(s, ['checkout', at, '--pathspec-from-file=-', '--pathspec-file-nul'], back.join('\0'));
    });
  }

  /** Runs `work` on the shadow of `root` (made on first use), one at a time per shadow. */
  async #locked<T>(root: string, work: (s: Shadow) => Promise<T>): Promise<T> {
    if (!path.isAbsolute(root)) throw new Error(`the project directory must be an absolute path: ${root}`);
    const real = await realpath(root).catch(() => {
      throw new Error(`the project directory ${root} does not exist`);
    });
    let ready = this.#ready.get(real);
    if (!ready) {
      ready = this.#open(real);
      this.#ready.set(real, ready);
      ready.catch(() => this.#ready.delete(real));
    }
    const shadow = await ready;
    return this.#locks.run(shadow.gitDir, () => work(shadow));
  }

  /** The shadow repository of `root`, made if missing. */
  async #open(root: string): Promise<Shadow> {
    const gitDir = path.join(this.#base, createHash('sha256').update(root).digest('hex').slice(0, 32));
    const s: Shadow = { root, gitDir };
    if (!existsSync(path.join(gitDir, 'HEAD'))) {
      await mkdir(gitDir, { recursive: true, mode: 0o700 });
      // No template: nothing of the system's (hooks, excludes) is copied in.
      await this.#run.run(this.#base, ['init', '-q', '--bare', '--template=', gitDir], {
        env: isolated(),
        timeoutMs: this.#timeoutMs,
      });
      for (const [k, v] of SETTINGS) await this.#git(s, ['config', k, v]);
      await mkdir(path.join(gitDir, 'info'), { recursive: true });
      await writeFile(path.join(gitDir, 'info', 'attributes'), ATTRIBUTES);
      // Which directory this is, for whoever looks in the data directory.
      await writeFile(path.join(gitDir, 'description'), `The shadow history of ${root}\n`);
    }
    return s;
  }

  /**
   * Makes the shadow's index match the files as they are now: the user's excludes copied in,
   * everything the ignore rules let through added, and the files the user's git tracks although
   * they are ignored.
   */
  async #stage(s: Shadow): Promise<void> {
    await this.#copyExcludes(s);
    await this.#git(s, ['add', '-A']);
    const forced = await this.#trackedIgnored(s.root);
    if (forced.length > 0)
      await this.#git(s, ['add', '-f', '--pathspec-from-file=-', '--pathspec-file-nul'], forced.join('\0'));
  }

  /** Stages, then commits the index as a snapshot kept under `refs/cleveragents/<keep>`; returns the commit. */
  async #snapshot(s: Shadow, keep: string): Promise<string> {
    if (!KEEP.test(keep) || keep.split('/').some((p) => p === '.' || p === '..' || p.endsWith('.lock')))
      throw new Error(`not a snapshot name: ${JSON.stringify(keep)}`);
    await this.#stage(s);
    const body = 't=$(g write-tree) && c=$(g commit-tree "$t" -m "$M") && g update-ref "$K" "$c" && echo "$c"\n';
    const r = await this.#retry(() =>
      this.#run.script(
        s.root,
        body,
        {
          ...this.#opts(s),
          identity: true,
          vars: { M: `snapshot ${keep}`, K: `refs/cleveragents/${keep}` },
        },
        ['write-tree', '&&', 'git', 'commit-tree', '&&', 'git', 'update-ref', keep],
      ),
    );
    return r.stdout;
  }

  /** The user's `.git/info/exclude` (when `root` is a repository's top) as the shadow's. */
  async #copyExcludes(s: Shadow): Promise<void> {
    const files = worktreeFiles(s.root);
    const want = files ? await readFile(path.join(files.common, 'info', 'exclude'), 'utf8').catch(() => '') : '';
    const file = path.join(s.gitDir, 'info', 'exclude');
    if ((await readFile(file, 'utf8').catch(() => '')) !== want) await writeFile(file, want);
  }

  /** Files under `root` the user's git tracks although its ignore rules match them (that still exist). */
  async #trackedIgnored(root: string): Promise<string[]> {
    const r = await this.#run.run(root, ['ls-files', '-z', '--cached', '--ignored', '--exclude-standard'], {
      env: isolated(),
      timeoutMs: this.#timeoutMs,
      // 128: not inside a repository.
      okCodes: [128],
    });
    if (r.code !== 0) return [];
    return splitNul(r.stdout).filter((f) => {
      try {
        const st = lstatSync(path.join(root, f));
        return st.isFile() || st.isSymbolicLink();
      } catch {
        return false;
      }
    });
  }

  /** `git <args>` on the shadow; stdout. */
  async #git(s: Shadow, args: readonly string[], input?: string): Promise<string> {
    const opts = input === undefined ? this.#opts(s) : { ...this.#opts(s), input };
    return (await this.#retry(() => this.#run.run(s.root, args, opts))).stdout;
  }

  #opts(s: Shadow): { env: Record<string, string>; workTree: string; timeoutMs: number } {
    return {
      env: { ...isolated(), GIT_DIR: s.gitDir, GIT_LITERAL_PATHSPECS: '1' },
      workTree: s.root,
      timeoutMs: this.#timeoutMs,
    };
  }

  /** Another agent process works on the same shadow (its index is locked): wait for it, a while. */
  async #retry<T>(work: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (let pause = 20; ; pause = Math.min(pause * 2, 500)) {
      try {
        return await work();
      } catch (e) {
        if (
          !(e instanceof GitError) ||
          !/index\.lock|could not lock|\.lock': File exists/.test(e.stderr) ||
          Date.now() > deadline
        )
          throw e;
        await new Promise((r) => setTimeout(r, pause));
      }
    }
  }
}

/** No global or system configuration: the shadow's own settings only. */
function isolated(): Record<string, string> {
  return { GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
}

function checkSha(id: string): void {
  if (!SHA.test(id)) throw new Error(`not a snapshot id: ${JSON.stringify(id)}`);
}

/**
 * Removes the file `rel` of `root` and the directories it leaves empty, never through a symbolic
 * link: a path whose parent resolves outside `root` is refused.
 */
async function removeInside(root: string, rel: string): Promise<void> {
  const file = path.resolve(root, rel);
  const parent = path.dirname(file);
  if (!file.startsWith(root + path.sep)) throw new Error(`${rel} is outside ${root}`);
  const realParent = await realpath(parent).catch(() => undefined);
  if (realParent === undefined) return; // its directory is gone: so is the file
  if (realParent !== parent) throw new Error(`${rel} is reached through a symbolic link; not removed`);
  await rm(file, { force: true });
  for (let dir = parent; dir !== root && dir.startsWith(root + path.sep); dir = path.dirname(dir)) {
    try {
      await rmdir(dir);
    } catch {
      break; // not empty
    }
  }
}
