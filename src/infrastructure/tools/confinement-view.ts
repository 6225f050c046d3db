/**
 * What a confined command sees of the host's file system (issue #35): not `/` read-only, but the
 * system's program and library directories, a curated `/etc`, the toolchains the administrator
 * named, and the runtime running the agent — all read-only. Everything else (`/home`, `/root`,
 * `/srv`, `/var`, `/run`, `/mnt`, `/opt`, other workspaces, the data directory, host UNIX
 * sockets) is simply absent. `CommandConfinement` adds the per-command parts on top: a private
 * `/tmp` and HOME, `/proc`, `/dev`, the sandbox read-write, its git metadata read-only.
 *
 * The view is computed once, at start-up; the mounts that may go away meanwhile (an `/etc` file a
 * package upgrade replaces) use bubblewrap's `-try` forms so a command never fails on them.
 */
import { realpathSync, statSync } from 'node:fs';
import { lstat, readFile, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * The top-level system directories besides `/usr` (which always comes, with `/usr/local`): a
 * symlink on the host (merged /usr: `/bin -> usr/bin`) is the same symlink inside, a directory is
 * bound read-only, a missing one is left out. `/opt` is not one: a toolchain there is added by
 * `confinement.readOnlyPaths`.
 */
const SYSTEM_DIRS = ['bin', 'sbin', 'lib', 'lib64', 'lib32', 'libx32'] as const;

/**
 * The curated `/etc`, with the reason each entry is there: what programs need to start, name
 * users, resolve and reach hosts, verify TLS and find their system configuration. Each comes only
 * if it exists. Never `shadow`, `gshadow`, `sudoers`, `ssh/`, keys; not `npmrc`, `pip.conf` or
 * `wgetrc` either (registry and proxy credentials live there, and the tools work without them).
 */
export const ETC_ENTRIES: readonly (readonly [name: string, why: string])[] = [
  ['passwd', 'user names: whoami, ls -l, git and ssh ask for the running user'],
  ['group', 'group names'],
  ['nsswitch.conf', 'how the C library looks up users, groups and hosts'],
  ['hosts', 'name resolution (localhost)'],
  ['resolv.conf', 'name resolution (DNS servers; a symlink into /run is replaced by its target file)'],
  ['host.conf', 'name resolution order'],
  ['gai.conf', 'address selection of getaddrinfo'],
  ['services', 'port names (getservbyname)'],
  ['protocols', 'protocol names (getprotobyname)'],
  ['ld.so.cache', 'the dynamic linker finds shared libraries'],
  ['ld.so.conf', 'the dynamic linker configuration'],
  ['ld.so.conf.d', 'the dynamic linker configuration'],
  ['localtime', 'the local time zone'],
  ['timezone', 'the local time zone, by name'],
  ['ssl', 'TLS: CA certificates and OpenSSL configuration (its private/ stays hidden)'],
  ['ca-certificates', 'TLS: the CA bundle selection'],
  ['ca-certificates.conf', 'TLS: the CA bundle selection'],
  ['pki', 'TLS on Fedora/RHEL: CA certificates (its private/ directories stay hidden)'],
  ['crypto-policies', 'TLS on Fedora/RHEL: the system crypto policy OpenSSL reads'],
  ['alternatives', "Debian's program symlinks (/usr/bin/awk -> /etc/alternatives/awk)"],
  ['os-release', 'which system this is (package managers, build scripts)'],
  ['debian_version', 'which system this is'],
  ['redhat-release', 'which system this is'],
  ['lsb-release', 'which system this is'],
  ['mime.types', 'content types by file extension'],
  ['magic', 'file(1) type detection'],
  ['magic.mime', 'file(1) type detection'],
  ['locale.alias', 'locale names'],
  ['gitconfig', "git's system configuration (the administrator's: safe.directory, …)"],
  ['mtab', 'the mounted file systems (df), a link to /proc/self/mounts'],
];

/** Inside the `/etc` entries above, what is hidden again: private keys. */
const ETC_MASKED = ['ssl/private', 'pki/tls/private', 'pki/CA/private'];

/** Top-level directories a command never sees whole: a runtime found there is not added. */
const NEVER_WHOLE = ['/', '/home', '/root', '/srv', '/var', '/run', '/mnt', '/media', '/tmp', '/opt', '/etc'];

/** Files and directories under the home directory that hold credentials. */
const HOME_SECRETS = [
  '.ssh',
  '.aws',
  '.gnupg',
  '.netrc',
  '.git-credentials',
  '.docker',
  '.kube',
  '.npmrc',
  '.pypirc',
  '.azure',
  '.config/gh',
  '.config/gcloud',
];

/** Every path whose content a command never sees: the home's secrets and the configured ones. */
export const maskedPaths = (home: string, secrets: readonly string[]): string[] => [
  ...HOME_SECRETS.map((p) => path.join(home, p)),
  ...secrets,
];

/** A host directory shown read-only beyond the system ones, and why. */
export interface ReadOnlyPath {
  path: string;
  why: 'configured' | 'runtime';
}

/** The fixed part of every confined command's view. */
export interface SystemView {
  /** bubblewrap options that build it, in order. */
  args: readonly string[];
  /** How it reads, for diagnostics: `/usr`, `/bin -> usr/bin`, … */
  systemDirs: readonly string[];
  /** The `/etc` entries present. */
  etc: readonly string[];
  /** Toolchains and the runtime, as given (a symlink is shown at its own path and its target's). */
  readOnly: readonly ReadOnlyPath[];
  /** Host paths shown read-only at the same path (the system dirs, the /etc entries, `readOnly`). */
  roots: readonly string[];
}

const isUnder = (p: string, dir: string): boolean => p === dir || p.startsWith(dir === '/' ? '/' : `${dir}/`);

/** Whether `p` lies at or under one of `dirs`. */
export const isUnderAny = (p: string, dirs: readonly string[]): boolean => dirs.some((d) => isUnder(p, d));

/**
 * Builds the view: `/usr`, the system dirs as they are on the host, the curated `/etc`, then each
 * read-only path (already checked to be an absolute directory by whoever configured it).
 */
export async function buildSystemView(opts: {
  readOnlyPaths: readonly string[];
  runtimeDirs: readonly string[];
}): Promise<SystemView> {
  const args = ['--ro-bind', '/usr', '/usr'];
  const systemDirs = ['/usr'];
  const visible = ['/usr', '/proc'];
  for (const name of SYSTEM_DIRS) {
    const p = `/${name}`;
    const st = await lstat(p).catch(() => undefined);
    if (st?.isSymbolicLink()) {
      const target = await readlink(p);
      args.push('--symlink', target, p);
      systemDirs.push(`${p} -> ${target}`);
      visible.push(p);
    } else if (st?.isDirectory()) {
      args.push('--ro-bind', p, p);
      systemDirs.push(p);
      visible.push(p);
    }
  }
  const etc: string[] = [];
  const roots = [...visible.filter((p) => p !== '/proc')];
  args.push('--dir', '/etc');
  for (const [name] of ETC_ENTRIES) {
    const p = `/etc/${name}`;
    const st = await lstat(p).catch(() => undefined);
    if (!st) continue;
    const mount = st.isSymbolicLink() ? await etcLink(p, visible) : ['--ro-bind-try', p, p];
    if (!mount) continue;
    args.push(...mount);
    etc.push(name);
    roots.push(p);
  }
  for (const rel of ETC_MASKED) {
    const p = `/etc/${rel}`;
    if (etc.includes(rel.split('/')[0] ?? '') && (await stat(p).catch(() => undefined))?.isDirectory())
      args.push('--tmpfs', p, '--remount-ro', p);
  }
  const readOnly: ReadOnlyPath[] = [];
  const shown = (p: string): boolean => isUnderAny(p, roots);
  for (const [list, why] of [
    [opts.readOnlyPaths, 'configured'],
    [opts.runtimeDirs, 'runtime'],
  ] as const) {
    for (const named of list) {
      const given = path.resolve(named);
      const real = await realpath(given).catch(() => undefined);
      if (!real || shown(given) || shown(real)) continue;
      args.push(why === 'configured' ? '--ro-bind' : '--ro-bind-try', real, real);
      // Shown at the path it was named by too, so both spellings work inside.
      if (given !== real) args.push('--symlink', real, given);
      readOnly.push({ path: given, why });
      roots.push(...new Set([real, given]));
    }
  }
  return { args, systemDirs, etc, readOnly, roots };
}

/**
 * An `/etc` symlink: kept as a symlink when what it points to is in the view (`localtime ->
 * /usr/share/zoneinfo/…`, `mtab -> ../proc/self/mounts`), else replaced by its target file
 * (`resolv.conf -> ../run/systemd/resolve/stub-resolv.conf`: `/run` is not in the view).
 */
async function etcLink(p: string, visible: readonly string[]): Promise<string[] | undefined> {
  const text = await readlink(p);
  const real = await realpath(p).catch(() => undefined);
  if (!real) return undefined;
  const lexical = path.resolve(path.dirname(p), text);
  if (isUnderAny(lexical, visible) && isUnderAny(real, visible)) return ['--symlink', text, p];
  return ['--ro-bind-try', real, p];
}

/**
 * Checks one `confinement.readOnlyPaths` entry (at start-up); returns the problem, or undefined. It
 * must be an absolute path naming an existing directory, not `/`, and neither inside nor holding
 * nothing but a path that is never shown (`hidden`: home secrets, the config and data directories,
 * the token file) — inside one it would show what the mask hides.
 */
export function readOnlyPathProblem(p: string, hidden: readonly string[]): string | undefined {
  if (!path.isAbsolute(p)) return 'is not an absolute path';
  let real: string;
  try {
    real = realpathSync(p);
  } catch {
    return 'does not exist';
  }
  if (!statSync(real).isDirectory()) return 'is not a directory';
  if (real === '/') return 'is the whole file system (commands see a minimal one on purpose)';
  for (const h of hidden) {
    let hr = h;
    try {
      hr = realpathSync(h);
    } catch {
      // A secret that does not exist (yet) is compared as written.
    }
    if (isUnder(real, hr)) return `is inside ${h}, which commands never see`;
  }
  return undefined;
}

/**
 * Where the Node.js running the agent is installed, when outside the system dirs, so that a plan's
 * `npm test` still finds `node`: the directory two levels above the real program
 * (`…/bin/node`), and, when the first `node` on PATH is this same program behind a symlink (npm's
 * bin links: `~/.node24/bin/node -> ../lib/node_modules/node/…`), the directory two levels above
 * that link. Never `/`, a top-level directory, or the home directory or one above it.
 */
export async function nodeInstallation(opts: {
  execPath: string;
  searchPath: string;
  home: string;
}): Promise<string[]> {
  const real = await realpath(opts.execPath).catch(() => undefined);
  if (!real) return [];
  const candidates = [real];
  for (const dir of opts.searchPath.split(':')) {
    if (!path.isAbsolute(dir)) continue;
    const found = await realpath(path.join(dir, 'node')).catch(() => undefined);
    if (found === undefined) continue;
    if (found === real) candidates.unshift(path.join(dir, 'node'));
    break;
  }
  const system = ['/usr', ...SYSTEM_DIRS.map((d) => `/${d}`)];
  const out: string[] = [];
  for (const bin of candidates) {
    if (path.basename(path.dirname(bin)) !== 'bin') continue;
    const prefix = path.dirname(path.dirname(bin));
    if (NEVER_WHOLE.includes(prefix) || isUnder(opts.home, prefix) || isUnderAny(prefix, system)) continue;
    if (!isUnderAny(prefix, out)) out.push(prefix);
  }
  return out;
}

/** What a confined command sees, in one paragraph (the `command confinement` diagnostics check). */
export function describeView(view: SystemView): string {
  const tools = view.readOnly.map(
    (r) => `${r.path} (${r.why === 'configured' ? 'confinement.readOnlyPaths' : 'the Node.js running the agent'})`,
  );
  return [
    `A command sees, read-only: ${view.systemDirs.join(', ')}`,
    `/etc: ${view.etc.join(', ') || 'nothing'}`,
    `toolchains: ${tools.join(', ') || 'none (add them with --read-only-path)'}`,
    'read-write: its sandbox (git metadata read-only), a private /tmp with HOME=/tmp/home',
    'its own /proc and /dev; nothing else of the host (no /home, /root, /srv, /var, /run, /mnt, no other workspace, no host UNIX socket)',
    'network: none unless the plan allows it, and then the host network (loopback and abstract UNIX sockets included)',
  ].join('; ');
}

/**
 * Read-only binds for the sandbox's git metadata: its `.git` (a directory for a copy sandbox, a
 * file for a worktree), and for a worktree the repository it points into (which may be hidden by
 * the private /tmp or a masked directory otherwise), so `git status` still works inside.
 */
export async function gitBinds(root: string): Promise<string[]> {
  const dotGit = path.join(root, '.git');
  const st = await lstat(dotGit).catch(() => undefined);
  if (!st || st.isSymbolicLink()) return [];
  const out = ['--ro-bind', dotGit, dotGit];
  if (!st.isFile()) return out;
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(await readFile(dotGit, 'utf8').catch(() => ''));
  if (!m?.[1]) return out;
  const adminDir = path.resolve(root, m[1]);
  const common = await readFile(path.join(adminDir, 'commondir'), 'utf8').catch(() => undefined);
  const repoDir = common ? path.resolve(adminDir, common.trim()) : adminDir;
  for (const d of new Set([repoDir, adminDir])) {
    if (isUnder(d, root) || !(await stat(d).catch(() => undefined))?.isDirectory()) continue;
    out.push('--ro-bind', d, d);
    if (d === repoDir && isUnder(adminDir, repoDir)) break;
  }
  return out;
}
