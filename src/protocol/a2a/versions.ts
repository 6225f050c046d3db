import { AppError } from '../../domain/errors.ts';

export const SUPPORTED_VERSIONS = ['1.0', '0.3'] as const;
export type ProtocolVersion = (typeof SUPPORTED_VERSIONS)[number];

/**
 * Our extension: one URI (a breaking change would take a new one), additive minor versions, newest
 * first:
 * - 1.5 adds trust on a server: capability grants of namespaces, and each namespace's secrets;
 * - 1.4 adds what coding-agent users expect: session fork and compaction, hooks;
 * - 1.3 adds teams: whoami, users, API keys, the audit log, namespace management and sync;
 * - 1.2 adds the context service (`_cleveragents/context/…`);
 * - 1.1 adds the plan lifecycle (`_cleveragents/plan/…`);
 * - 1.0 is sessions, registries, namespaces, health and diagnostics, discovery.
 */
export const EXTENSION_URI = 'urn:cleveragents:extensions:v1';
export const EXTENSION_HISTORY = ['1.5', '1.4', '1.3', '1.2', '1.1', '1.0'] as const;
/** A minor version of the extension's history (what a method's `since` names). */
export type ExtensionVersion = (typeof EXTENSION_HISTORY)[number];
/** What the server serves: the current minor and the one before it (DESIGN.md §3.7). */
export const EXTENSION_VERSIONS: readonly ExtensionVersion[] = EXTENSION_HISTORY.slice(0, 2);
export const EXTENSION_VERSION: ExtensionVersion = EXTENSION_HISTORY[0];
/**
 * How a client asks for a minor version: this HTTP header (or, over stdio, `extensionVersion` in
 * `initialize`). Absent means the current one. The server echoes the version it served.
 */
export const EXTENSION_VERSION_HEADER = 'cleveragents-extension-version';

/**
 * The extension version a request asked for (Major.Minor, a patch is ignored); undefined means the
 * current one. A version not served is a version mismatch (-32007): the spec forbids falling back.
 */
export function parseExtensionVersion(raw: string | null | undefined): ExtensionVersion {
  if (raw === undefined || raw === null || raw.trim() === '') return EXTENSION_VERSION;
  const m = /^\s*v?(\d+)\.(\d+)(?:\.\d+)?\s*$/.exec(raw);
  const mm = m ? `${Number(m[1])}.${Number(m[2])}` : raw.trim().slice(0, 20);
  if ((EXTENSION_VERSIONS as readonly string[]).includes(mm)) return mm as ExtensionVersion;
  throw new AppError(
    'VERSION_MISMATCH',
    `Extension ${EXTENSION_URI} version ${mm} is not served; this server serves ${EXTENSION_VERSIONS.join(' and ')}`,
    {
      details: { extension: EXTENSION_URI, requested: mm, served: [...EXTENSION_VERSIONS] },
      hint: `send ${EXTENSION_VERSION_HEADER}: ${EXTENSION_VERSION} (or omit it for the current version)`,
    },
  );
}

/** Whether a method added in `since` exists in extension version `v`. */
export function servedIn(since: ExtensionVersion | undefined, v: ExtensionVersion): boolean {
  return EXTENSION_HISTORY.indexOf(v) <= EXTENSION_HISTORY.indexOf(since ?? '1.0');
}

/**
 * The version a request asked for: `A2A-Version` (header or query parameter), Major.Minor only.
 * Absent means the caller did not say; the dispatcher then applies the spec's 0.3 default to
 * the names v0.3 knows. Any other version is VersionNotSupported.
 */
export function parseVersion(raw: string | null | undefined): ProtocolVersion | undefined {
  if (raw === undefined || raw === null || raw.trim() === '') return undefined;
  const m = /^\s*(\d+)\.(\d+)(?:\.\d+)?\s*$/.exec(raw);
  const mm = m ? `${Number(m[1])}.${Number(m[2])}` : raw.trim();
  if ((SUPPORTED_VERSIONS as readonly string[]).includes(mm)) return mm as ProtocolVersion;
  throw new AppError(
    'VERSION_NOT_SUPPORTED',
    `A2A version ${raw.trim()} is not supported; this server speaks ${SUPPORTED_VERSIONS.join(' and ')}`,
    {
      details: { requested: raw.trim(), supported: [...SUPPORTED_VERSIONS] },
      hint: 'send A2A-Version: 1.0',
    },
  );
}
