/**
 * The composition root's part for issue #35: one egress guard for every outbound URL, the
 * capability service that says what a namespace's definitions may make the server do, and the
 * MCP hub, which on a server runs a member's stdio server confined (with the host network only
 * where its namespace holds private-network) and reaches HTTP servers through the guard.
 */
import { join } from 'node:path';
import { AuditService, CapabilityService, type Logger } from '../application/index.ts';
import {
  EgressGuard,
  type EgressAllowlist,
  FsResourceInspector,
  HttpWebhookSender,
  SdkMcpHub,
  type ConfinementSource,
  type Storage,
} from '../infrastructure/index.ts';
import { workspaceRootOf } from './paths.ts';

export interface TrustWiring {
  server: boolean;
  dataDir: string;
  workspaceRoot?: string | undefined;
  /** Hosts an administrator allowed outbound requests to reach although they are internal. */
  allowlist: EgressAllowlist;
  storage: Storage;
  confinement: ConfinementSource;
  logger: Logger;
}

export function wireTrust(w: TrustWiring): {
  egress: EgressGuard;
  webhooks: HttpWebhookSender;
  inspector: FsResourceInspector;
  capabilities: CapabilityService;
  mcp: SdkMcpHub;
} {
  const { server, storage, confinement, logger } = w;
  // One guard for every outbound URL a definition or a request names. Local mode (no
  // authentication: the machine's own user) lets LLM endpoints reach the user's own services (an
  // Ollama on 127.0.0.1); webhooks and hooks pass the guard in both modes.
  const egress = new EgressGuard({ allow: w.allowlist });
  const webhooks = new HttpWebhookSender({ guard: egress });
  const inspector = new FsResourceInspector();
  // What a member's definitions may make the server do is what an administrator granted (issue #35).
  const capabilities = new CapabilityService({
    grants: storage.grants,
    inspector,
    settings: server
      ? {
          mode: 'server',
          workspaceRoot: w.workspaceRoot ?? workspaceRootOf(undefined, w.dataDir),
          hiddenPaths: [{ path: w.dataDir, label: '<data dir>' }],
        }
      : { mode: 'local' },
    // A definition's URL that reaches a private address needs private-network on a server only.
    egress: server ? egress : undefined,
    namespaceExists: async (name) => (await storage.namespaces.get(name)) !== undefined,
    audit: new AuditService(storage.audit, logger),
  });
  // MCP servers start when a tool is first needed; every one is stopped at close(). On a server a
  // member's stdio server runs confined, with the host network only where its namespace holds private-network.
  const mcp = new SdkMcpHub({
    logger,
    ...(server
      ? {
          policy: async (use) => ({
            confine: true,
            privateNetwork: use !== undefined && (await capabilities.holds(use.namespace, 'private-network')),
          }),
          confinement: {
            prepare: async (inv) => (await confinement).prepare(inv),
            scratchRoot: join(w.dataDir, 'mcp'),
          },
          guardedFetch: egress.fetch,
        }
      : {}),
  });
  return { egress, webhooks, inspector, capabilities, mcp };
}
