/**
 * The oldest Node.js the CLI runs on (package.json `engines.node`), checked by bin.ts before any
 * dependency loads: on an older Node a dependency fails with a stack trace about a missing API,
 * which says nothing about the cause. Imports nothing, so that it parses and runs on any Node.
 */

/** package.json's `engines.node`, `>=22.12`, as numbers. */
export const MIN_NODE = { major: 22, minor: 12 } as const;

/**
 * The one line to print when `version` (as `process.versions.node`, `20.20.2`) is older than
 * {@link MIN_NODE}, else undefined. A version that does not parse is let through: refusing a Node
 * we cannot read would block a user on a build we know nothing about.
 */
export function nodeVersionRefusal(version: string): string | undefined {
  const m = /^v?(\d+)\.(\d+)/.exec(version);
  if (!m) return undefined;
  const major = Number(m[1]);
  const minor = Number(m[2]);
  if (major > MIN_NODE.major || (major === MIN_NODE.major && minor >= MIN_NODE.minor)) return undefined;
  return (
    `agents: needs Node.js ${MIN_NODE.major}.${MIN_NODE.minor} or newer (24 recommended); ` +
    `this is v${version.replace(/^v/, '')} — see README "Requirements"`
  );
}
