/**
 * Which URLs a `git-remote` resource may name. git understands far more than a server should fetch
 * from on a member's word: `file://` and plain paths read the host's own repositories, `ext::`
 * runs a program, ssh runs `ssh` with options an URL can smuggle (`ssh://-oProxyCommand=…`), and
 * user information in the URL would store a credential in the registry. Only http(s) and git://
 * to a named host pass; credentials come from a namespace secret (the resource's `credentials`).
 */

/** The protocols a git-remote URL may use (git's names, as GIT_ALLOW_PROTOCOL takes them). */
export const GIT_REMOTE_PROTOCOLS = ['https', 'http', 'git'] as const;
export type GitRemoteProtocol = (typeof GIT_REMOTE_PROTOCOLS)[number];

/** git's default port of each protocol. */
export const GIT_REMOTE_DEFAULT_PORT: Readonly<Record<GitRemoteProtocol, number>> = { https: 443, http: 80, git: 9418 };

const WRITE_IT = 'write it as https://host/owner/repo.git (or http://, git://)';

/** Why `url` may not be a git-remote's URL (one sentence), or undefined when it may. */
export function gitRemoteUrlProblem(url: string): string | undefined {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\s\0-\x1f\x7f]/.test(url)) return 'must not contain spaces or control characters';
  if (url.startsWith('-')) return `must not start with "-"; ${WRITE_IT}`;
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(url))
    return `git's transport helpers ("${url.slice(0, url.indexOf('::'))}::") are refused; ${WRITE_IT}`;
  const notAUrl = `is not a URL git may fetch from here (local paths and host:path ssh addresses are refused); ${WRITE_IT}`;
  // scp-like `host:path` (ssh) and local paths are not URLs, although `github.com:o/r.git` parses as one (scheme "github.com").
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(url)) return notAUrl;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return notAUrl;
  }
  const protocol = parsed.protocol.replace(/:$/, '');
  if (!(GIT_REMOTE_PROTOCOLS as readonly string[]).includes(protocol))
    return `${protocol} URLs are refused (only ${GIT_REMOTE_PROTOCOLS.join(', ')}); ${WRITE_IT}`;
  if (parsed.hostname === '') return `names no host; ${WRITE_IT}`;
  if (parsed.username !== '' || parsed.password !== '')
    return 'must not hold a user name or password: store the token as a secret (agents secret set NAME) and name it in credentials';
  if (parsed.search !== '' || parsed.hash !== '') return `must not have a query or fragment; ${WRITE_IT}`;
  return undefined;
}
