/** The Agent Card at its well-known paths, and the CleverAgents extension's activation headers. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentCardProvider } from '../a2a/agent-card.ts';
import {
  EXTENSION_URI,
  EXTENSION_VERSION_HEADER,
  parseExtensionVersion,
  parseVersion,
  type ProtocolVersion,
} from '../a2a/versions.ts';
import { header, rpcError, sendJson, statusForError } from './http-response.ts';

/** The card in the version the client asks for (header or query), with an ETag and a 304 when unchanged. */
export function serveCard(provider: AgentCardProvider, req: IncomingMessage, res: ServerResponse, url: URL): void {
  let version: ProtocolVersion | undefined;
  try {
    version = parseVersion(header(req, 'a2a-version') ?? url.searchParams.get('A2A-Version'));
  } catch (err) {
    return sendJson(res, statusForError(err), rpcError(null, err, 'a2a-v1'));
  }
  const { card, etag } = provider.publicCard(version);
  res.setHeader('etag', etag);
  res.setHeader('cache-control', 'public, max-age=300');
  res.setHeader('vary', 'A2A-Version');
  if (req.headers['if-none-match'] === etag) {
    res.statusCode = 304;
    res.end();
    return;
  }
  sendJson(res, 200, card, req.method === 'HEAD');
}

/**
 * Activates the CleverAgents extension when the client asks for it, and answers with the version
 * served; returns the version header the client sent. An unserved version is refused by the
 * extension methods (-32007), not downgraded.
 */
export function activateExtension(req: IncomingMessage, res: ServerResponse): string | undefined {
  const requested = (header(req, 'a2a-extensions') ?? '').split(',').map((s) => s.trim());
  const extensionVersion = header(req, EXTENSION_VERSION_HEADER);
  if (requested.includes(EXTENSION_URI)) {
    res.setHeader('a2a-extensions', EXTENSION_URI);
    try {
      res.setHeader(EXTENSION_VERSION_HEADER, parseExtensionVersion(extensionVersion));
    } catch {
      // not activated
    }
  }
  return extensionVersion;
}
