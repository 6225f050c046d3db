import { AppError } from '../../domain/errors.js';

export const SUPPORTED_VERSIONS = ['1.0', '0.3'] as const;
export type ProtocolVersion = (typeof SUPPORTED_VERSIONS)[number];
export const CURRENT_VERSION: ProtocolVersion = '1.0';

/** Our extension: URI and the minor versions served (current and one prior). */
export const EXTENSION_URI = 'urn:cleveragents:extensions:v1';
export const EXTENSION_VERSION = '1.0';

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
  throw new AppError('VERSION_NOT_SUPPORTED', `A2A version ${raw.trim()} is not supported; this server speaks ${SUPPORTED_VERSIONS.join(' and ')}`, {
    details: { requested: raw.trim(), supported: [...SUPPORTED_VERSIONS] },
    hint: 'send A2A-Version: 1.0',
  });
}
