/**
 * What a repository's own configuration could make our git run, switched off. Fixed settings (see
 * git.ts) cover the named options (core.fsmonitor, hooks, pagers, credential helpers…), but a
 * filter, diff or merge driver has a name the repository chooses, and `-c` cannot delete a driver:
 * so the repository's configuration is listed (`git config -l --includes`, which runs nothing)
 * and every driver it defines is given values that run nothing:
 *
 * - `filter.<d>.{clean,smudge,process}` empty and `required` false: the content is stored and
 *   checked out as it is (git skips a filter whose command is empty; `required` would refuse that);
 * - `diff.<d>.{command,textconv}` empty (and `diff.external`): our diffs pass `--no-ext-diff
 *   --no-textconv`; a command that forgot would fail ("cannot run"), not run the repository's program;
 * - `merge.<d>.driver` git's own three-way text merge (`git merge-file`, whose exit status is its
 *   number of conflicts): such a file merges as any text file does, with conflict markers — never
 *   silently as "ours" (`false` would flag the conflict but leave our side without markers).
 *
 * The values go through GIT_CONFIG_COUNT/KEY/VALUE, which, like `-c`, beat every config file and
 * reach the git processes git starts, and — unlike `-c name=value` — take a driver name holding
 * `=`. Only the repository's own scopes (local, worktree, and what they include) are neutralised:
 * the system's and the server user's global configuration are the administrator's.
 *
 * The answer is cached per repository, keyed on its config files' size, time and inode, so a plan
 * step does not pay a process for it; never when the configuration includes other files (they can
 * change without the repository's files changing).
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { worktreeFiles } from './git-files.ts';

/** What each driver's settings become. */
const NEUTRAL: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  filter: { clean: '', smudge: '', process: '', required: 'false' },
  diff: { command: '', textconv: '' },
  merge: { driver: 'git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B' },
};

/** Scopes the repository (or a command that wrote into it) controls. */
const REPOSITORY_SCOPES = new Set(['local', 'worktree']);

/** The arguments that list a repository's configuration, each entry as `scope NUL name NUL`. */
export const CONFIG_LIST_ARGS = ['config', '--list', '-z', '--show-scope', '--includes', '--name-only'] as const;

export interface ConfigOverrides {
  /** Settings to add to the command line (name, value). */
  settings: [string, string][];
  /** Whether the configuration includes other files (the answer is then not cached). */
  includes: boolean;
}

/** Reads `git config --list -z --show-scope --name-only` output: which settings to override. */
export function overridesOf(listing: string): ConfigOverrides {
  const fields = listing.split('\0');
  const drivers = new Map<string, Set<string>>();
  let includes = false;
  let external = false;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const scope = fields[i] ?? '';
    const name = fields[i + 1] ?? '';
    if (!REPOSITORY_SCOPES.has(scope)) continue;
    if (name === 'include.path' || (name.startsWith('includeif.') && name.endsWith('.path'))) includes = true;
    if (name === 'diff.external') external = true;
    const first = name.indexOf('.');
    const last = name.lastIndexOf('.');
    if (first < 0 || last <= first) continue;
    const section = name.slice(0, first);
    const neutral = NEUTRAL[section];
    // A variable of a driver we neutralise: every program setting of that driver is overridden.
    if (!neutral || !Object.hasOwn(neutral, name.slice(last + 1))) continue;
    const set = drivers.get(section) ?? new Set<string>();
    set.add(name.slice(first + 1, last));
    drivers.set(section, set);
  }
  const settings: [string, string][] = [];
  for (const [section, names] of drivers) {
    for (const d of [...names].sort())
      for (const [variable, value] of Object.entries(NEUTRAL[section] ?? {}))
        settings.push([`${section}.${d}.${variable}`, value]);
  }
  if (external) settings.push(['diff.external', '']);
  return { settings, includes };
}

/** The environment that carries `settings` to git (and to the git processes it starts). */
export function configEnv(settings: readonly [string, string][]): Record<string, string> {
  if (settings.length === 0) return {};
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(settings.length) };
  settings.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  return env;
}

/** The repository config files whose change changes the answer, as one key; undefined when unknown. */
function configKey(dir: string): string | undefined {
  const files = worktreeFiles(dir);
  if (!files) return undefined;
  const parts: string[] = [];
  for (const f of [path.join(files.common, 'config'), path.join(files.gitDir, 'config.worktree')]) {
    try {
      const st = statSync(f, { bigint: true });
      parts.push(`${f}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.ino}`);
    } catch {
      parts.push(`${f}:-`);
    }
  }
  return parts.join('|');
}

/** The overrides per repository, cached as described in the module's comment. */
export class ConfigGuard {
  readonly #cache = new Map<string, { key: string; env: Record<string, string> }>();

  /**
   * The environment of overrides for a command in `dir`; `list` runs `git <CONFIG_LIST_ARGS>` in
   * `dir` (where the command will run: inside the confinement for a sandbox) and returns its stdout.
   */
  async env(dir: string, list: () => Promise<string>): Promise<Record<string, string>> {
    const key = configKey(dir);
    const hit = key === undefined ? undefined : this.#cache.get(dir);
    if (hit && hit.key === key) return hit.env;
    const found = overridesOf(await list());
    const env = configEnv(found.settings);
    // Read again after listing: a file changed meanwhile is not cached under the key seen before.
    if (key !== undefined && !found.includes && configKey(dir) === key) this.#cache.set(dir, { key, env });
    else this.#cache.delete(dir);
    return env;
  }

  /** Forgets a repository (its sandbox was removed). */
  forget(dir: string): void {
    this.#cache.delete(dir);
  }
}

/** The process's one guard: the answer for a repository does not depend on who asks. */
export const configGuard = new ConfigGuard();
