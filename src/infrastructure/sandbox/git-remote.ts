/**
 * A `git-remote` resource's clone: a bare repository of the server's (`<dir>/<resource>.git`)
 * holding the target branch as fetched, from which plan sandboxes are git worktrees like a
 * git-checkout's. The URL is never stored in it (every fetch and push names it), so nothing in the
 * repository names where it came from or how to log in.
 *
 * Every network git process runs with what the host or the remote could add switched off: no
 * system or global configuration (credential helpers, url.insteadOf, proxies), only the URL's own
 * protocol (GIT_ALLOW_PROTOCOL), no redirects, the address judged by the egress guard and pinned
 * (`http.curloptResolve`; a git:// URL connects to the address itself) unless the namespace holds
 * private-network, and the credential in the environment as an `http.extraHeader`
 * (GIT_CONFIG_COUNT/KEY/VALUE): never on a command line, never in the repository, and scrubbed
 * from every message.
 */
import { mkdir, realpath } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { AppError } from '../../domain/errors.ts';
import { redact } from '../../domain/secrets.ts';
import {
  GIT_REMOTE_DEFAULT_PORT,
  gitRemoteUrlProblem,
  type GitRemoteProtocol,
} from '../../domain/registry/git-remote-url.ts';
import type { GitRemoteResource } from '../../domain/registry/resource.definition.ts';
import { namespaceOf } from '../../domain/registry/names.ts';
import type { EgressGuard } from '../net/egress-guard.ts';
import { GitError, git, gitOut } from './git.ts';
import { exists, slug } from './sandbox-files.ts';

export interface GitRemotesOptions {
  /** The directory a namespace's clones live in (server: `<workspace>/.remotes`; local: under the data directory). */
  dirOf(namespace: string): string;
  /** A secret of a namespace (undefined when there is none). */
  secret(namespace: string, name: string): Promise<string | undefined>;
  /** Server mode: every connection judged (internal hosts refused unless allowlisted) and pinned. Local mode: none. */
  egress?: Pick<EgressGuard, 'addressFor'> | undefined;
  /**
   * Whether a namespace holds private-network (asked at each use, so a revoked grant stops the next
   * fetch): its remotes connect inward unguarded, as its actors' endpoints and MCP servers do.
   */
  privateNetwork?: ((namespace: string) => Promise<boolean>) | undefined;
  /** How long one fetch or push may take (ms; default 300 000). */
  timeoutMs?: number;
}

/** The clone after a fetch: where it is, the target branch, and that branch's tip. */
export interface SyncedRemote {
  repository: string;
  targetBranch: string;
  tip: string;
}

/** What a push answered: done, or refused because the remote's branch is not where we expected. */
export type PushOutcome = { ok: true } | { ok: false; message: string };

const TIMEOUT_MS = 300_000;

export class GitRemotes {
  readonly #o: GitRemotesOptions;

  constructor(o: GitRemotesOptions) {
    this.#o = o;
  }

  /** Fetches the target branch (the remote's HEAD when the resource names none) into the clone, made on first use. */
  async sync(r: GitRemoteResource): Promise<SyncedRemote> {
    const repository = await this.#clone(r);
    const targetBranch = r.branch ?? (await this.#remoteHead(r, repository));
    const ref = `refs/heads/${targetBranch}`;
    // `+`: the remote's branch is the truth, even if someone rewrote it.
    await this.#network(r, repository, (url) => ['fetch', '-q', '--no-tags', '--', url, `+${ref}:${ref}`]);
    const tip = await gitOut(repository, ['rev-parse', '--verify', `${ref}^{commit}`], { confine: true });
    return { repository, targetBranch, tip };
  }

  /**
   * Pushes `commit` to the remote's branch `branch`. `force`: replace whatever is there (the plan's
   * own review branch); otherwise only a fast-forward, which git checks on the remote itself.
   */
  async push(
    r: GitRemoteResource,
    repository: string,
    commit: string,
    branch: string,
    force: boolean,
  ): Promise<PushOutcome> {
    try {
      await this.#network(r, repository, (url) => [
        'push',
        '-q',
        '--',
        url,
        `${force ? '+' : ''}${commit}:refs/heads/${branch}`,
      ]);
      return { ok: true };
    } catch (e) {
      if (e instanceof AppError && e.details['rejected'] === true) return { ok: false, message: e.message };
      throw e;
    }
  }

  /** The bare repository of the resource, made when missing (its real path: git reports real paths). */
  async #clone(r: GitRemoteResource): Promise<string> {
    const dir = path.join(this.#o.dirOf(namespaceOf(r.name)), `${slug(r.name)}.git`);
    if (!(await exists(path.join(dir, 'HEAD')))) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await git(dir, ['init', '-q', '--bare'], { confine: true });
    }
    return realpath(dir);
  }

  /** The branch the remote's HEAD names. */
  async #remoteHead(r: GitRemoteResource, repository: string): Promise<string> {
    const out = await this.#network(r, repository, (url) => ['ls-remote', '--symref', '--', url, 'HEAD']);
    const head = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(out)?.[1];
    if (!head)
      throw new AppError(
        'INVALID_STATE',
        `Resource ${r.name}: the remote names no default branch (an empty repository?)`,
        {
          details: { resource: r.name },
          hint: `set the branch to work on: agents resource update ${r.name} --config FILE (branch: main)`,
        },
      );
    return head;
  }

  /** Runs one network git command (see the module's comment); its failure becomes an error naming the resource. */
  async #network(r: GitRemoteResource, repository: string, args: (url: string) => string[]): Promise<string> {
    const problem = gitRemoteUrlProblem(r.url);
    if (problem)
      throw new AppError('INVALID_STATE', `Resource ${r.name}: url ${problem}`, { details: { resource: r.name } });
    const url = new URL(r.url);
    const protocol = url.protocol.replace(/:$/, '') as GitRemoteProtocol;
    const port = Number(url.port) || GIT_REMOTE_DEFAULT_PORT[protocol];
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const config: Array<[string, string]> = [[`protocol.${protocol}.allow`, 'always']];
    let target = r.url;
    if (this.#o.egress && !(await this.#o.privateNetwork?.(namespaceOf(r.name)))) {
      const address = await this.#o.egress.addressFor(host, port).catch((e: unknown) => {
        throw new AppError('FORBIDDEN', `Resource ${r.name}: ${(e as Error).message}`, {
          details: { resource: r.name, host },
          hint: `check the resource's url (agents resource show ${r.name})`,
        });
      });
      const literal = net.isIPv6(address) ? `[${address}]` : address;
      if (protocol === 'git') {
        // git:// has no TLS name to keep: connect to the judged address itself.
        url.hostname = literal;
        target = url.toString();
      } else config.push(['http.curloptResolve', `${host}:${port}:${literal}`]);
    }
    config.push(['http.followRedirects', 'false']);
    const credential = await this.#credential(r);
    if (credential)
      config.push(['http.extraHeader', `Authorization: Basic ${Buffer.from(credential).toString('base64')}`]);
    const env: Record<string, string> = {
      GIT_ALLOW_PROTOCOL: protocol,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_COUNT: String(config.length),
    };
    config.forEach(([k, v], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = k;
      env[`GIT_CONFIG_VALUE_${i}`] = v;
    });
    try {
      return (await git(repository, args(target), { confine: true, env, timeoutMs: this.#o.timeoutMs ?? TIMEOUT_MS }))
        .stdout;
    } catch (e) {
      if (!(e instanceof GitError)) throw e;
      throw failure(r, e.stderr, credential);
    }
  }

  /** `user:password` as it is, or a bare token as the password of `x-access-token` (GitHub, Gitea, GitLab take it so). */
  async #credential(r: GitRemoteResource): Promise<string | undefined> {
    if (!r.credentials) return undefined;
    const ns = namespaceOf(r.name);
    const value = await this.#o.secret(ns, r.credentials);
    if (value === undefined)
      throw new AppError(
        'INVALID_STATE',
        `Resource ${r.name}: its credentials name the secret ${r.credentials}, which namespace ${ns} does not have`,
        {
          details: { resource: r.name, secret: r.credentials },
          hint: `set it: agents secret set ${r.credentials} --namespace ${ns}`,
        },
      );
    return value.includes(':') ? value : `x-access-token:${value}`;
  }
}

/** A network git failure as one clear error: what went wrong, with the resource and what to do (never the credential). */
export function failure(r: GitRemoteResource, stderr: string, credential: string | undefined): AppError {
  // The credential as configured, as sent (base64) and each half of user:password.
  const secrets = credential ? [credential, Buffer.from(credential).toString('base64'), ...credential.split(':')] : [];
  const said = redact(stderr.trim().split('\n').slice(-3).join('; '), secrets).slice(0, 500);
  const details = { resource: r.name };
  const show = `agents resource show ${r.name}`;
  if (/\[rejected\]|non-fast-forward|fetch first|stale info/.test(stderr))
    return new AppError(
      'INVALID_STATE',
      `Resource ${r.name}: the remote refused the push: its branch moved (${said})`,
      {
        details: { ...details, rejected: true },
      },
    );
  if (
    /Authentication failed|could not read Username|HTTP 401|HTTP 403|returned error: 40[13]|terminal prompts disabled/i.test(
      stderr,
    )
  )
    return new AppError(
      'FORBIDDEN',
      `Resource ${r.name}: the remote refused the credentials${r.credentials ? ` (secret ${r.credentials})` : ' (the resource names none)'}`,
      {
        details,
        hint: r.credentials
          ? `set a token with access to the repository: agents secret set ${r.credentials}`
          : `store a token (agents secret set NAME) and name it in the resource's credentials`,
      },
    );
  if (/couldn't find remote ref|Couldn't find remote ref/i.test(stderr))
    return new AppError('NOT_FOUND', `Resource ${r.name}: the remote has no branch ${r.branch ?? '(its HEAD)'}`, {
      details,
      hint: `check the branch in ${show}, or push it to the remote first`,
    });
  if (
    /Could not resolve host|Connection refused|Failed to connect|unable to connect|timed out|Connection reset|unable to access/i.test(
      stderr,
    )
  )
    return new AppError('UNAVAILABLE', `Resource ${r.name}: the remote ${hostOf(r.url)} cannot be reached (${said})`, {
      details,
      hint: `check that the remote is up and the url in ${show} is right`,
    });
  if (
    /not found|does not appear to be a git repository|HTTP 404|repository .* not exported|access denied/i.test(stderr)
  )
    return new AppError('NOT_FOUND', `Resource ${r.name}: the remote has no repository at ${r.url} (${said})`, {
      details,
      hint: `check the url in ${show}`,
    });
  return new AppError('UNAVAILABLE', `Resource ${r.name}: git could not talk to the remote (${said})`, {
    details,
    hint: `check ${show}`,
  });
}

const hostOf = (url: string): string => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};
