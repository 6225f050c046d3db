import { createHash } from 'node:crypto';
import { z } from 'zod';
import { namespacesOf, type Principal } from '../../application/index.ts';
import type { MethodDef } from './method.ts';
import { buildOpenRpc } from './openrpc.ts';
import { EXTENSION_URI, EXTENSION_VERSION, EXTENSION_VERSIONS, type ProtocolVersion } from './versions.ts';

export interface AgentCardOptions {
  name: string;
  description: string;
  version: string;
  /**
   * The JSON-RPC endpoint clients use: `<public URL>/a2a` when a public URL is configured (behind a
   * proxy the bind address is not what clients reach), else `http://host:port/a2a`; `stdio:` locally.
   */
  endpoint: string;
  /** Server mode declares an API key (X-API-Key or bearer); local (stdio) mode needs none. */
  auth: 'bearer' | 'none';
  /** Server mode with an OpenID Connect issuer: also the oauth2 scheme (device code flow). */
  oidc?: CardOidc | undefined;
  pushNotifications: boolean;
  documentationUrl?: string;
}

/** What the card says of the OIDC issuer; the device endpoints once discovery has read them. */
export interface CardOidc {
  issuer: string;
  /** The OAuth client id the CLI's device login uses. */
  clientId?: string | undefined;
  /** The discovery document's URL (the oauth2 scheme's oauth2MetadataUrl). */
  metadataUrl: string;
  deviceAuthorizationUrl?: string | undefined;
  tokenUrl?: string | undefined;
}

type Card = Record<string, unknown>;

const API_KEY_HEADER = 'X-API-Key';
const API_KEY_TEXT = `An API key of this server (or its server token) in the ${API_KEY_HEADER} header.`;
const BEARER_TEXT = 'An API key of this server (or its server token) as a bearer token.';
const BEARER_OIDC_TEXT =
  'An API key of this server (or its server token), or an access token (JWT) from the OpenID Connect issuer, as a bearer token.';
const OAUTH_TEXT = 'Log in at the OpenID Connect issuer with the device code flow (agents login --device).';
/** The scopes the device login may ask for. */
const OAUTH_SCOPES = {
  openid: 'Sign in with OpenID Connect',
  profile: 'Your user name',
  offline_access: 'Stay logged in (a refresh token)',
};
const REQUIRED_SCOPES = ['openid'];

const SKILLS = [
  {
    id: 'plans',
    name: 'Plans',
    description:
      'Apply an action to projects: strategize a decision tree, execute tool calls in a git-worktree sandbox with checkpoints and approvals, review the diff, apply it as one commit; correct, roll back, cancel.',
    tags: ['plans', 'code-changes', 'sandbox', 'git'],
    examples: [
      'agents plan use builtin/replace local/api --arg pattern=colour --arg replacement=color',
      'agents plan execute <plan-id>',
    ],
  },
  {
    id: 'chat',
    name: 'Chat sessions',
    description: 'Talk to an actor in a persistent session (A2A context); each turn is a task with streamed output.',
    tags: ['chat', 'sessions'],
    examples: ['Hello there', 'Summarise our conversation so far'],
  },
  {
    id: 'tasks',
    name: 'Task tracking',
    description: 'Follow, list, cancel and subscribe to tasks; register webhooks for their updates.',
    tags: ['tasks', 'streaming', 'push-notifications'],
  },
  {
    id: 'registries',
    name: 'Registries and namespaces',
    description:
      'Define actors, tools, skills, resources, projects and actions from YAML or JSON: validated with file and line, namespaced, revisioned, reference-checked.',
    tags: ['registry', 'namespaces', 'configuration'],
    examples: ['agents actor add --config reviewer.yaml', 'agents resource add git-checkout local/api --path ./api'],
  },
  {
    id: 'diagnostics',
    name: 'Health and diagnostics',
    description: 'Check the server is alive and examine storage, disk, versions and configuration.',
    tags: ['health', 'diagnostics'],
  },
];

/**
 * The Agent Card (A2A §8), built from the method table so that it declares exactly the methods the
 * server serves. v1.0 callers get the ProtoJSON card; callers that name no version (v0.3 clients)
 * get the same card with the v0.3 fields added alongside.
 */
export class AgentCardProvider {
  private readonly cache = new Map<string, { card: Card; etag: string }>();
  private extendedSchemas: Card | undefined;
  private openRpcDoc: Card | undefined;

  private readonly opts: AgentCardOptions;
  private readonly methods: readonly MethodDef[];

  constructor(opts: AgentCardOptions, methods: readonly MethodDef[]) {
    this.opts = opts;
    this.methods = methods;
  }

  /** The endpoint is known only once the server listens (port 0 picks one). */
  setEndpoint(endpoint: string): void {
    this.opts.endpoint = endpoint;
    this.cache.clear();
    this.openRpcDoc = undefined;
  }

  /** The issuer's endpoints, once discovery (retried after a failed start) has read them. */
  setOidc(oidc: CardOidc): void {
    this.opts.oidc = oidc;
    this.cache.clear();
  }

  /** The OpenRPC document of every served method. */
  openRpc(): Card {
    this.openRpcDoc ??= buildOpenRpc(this.methods, { version: this.opts.version, endpoint: this.opts.endpoint });
    return this.openRpcDoc;
  }

  /** The public card and its ETag for a negotiated version (undefined: caller named none). */
  publicCard(version?: ProtocolVersion): { card: Card; etag: string } {
    const key = version ?? 'none';
    let hit = this.cache.get(key);
    if (!hit) {
      const card = version === '1.0' ? this.v1Card() : { ...this.v1Card(), ...this.v03Fields() };
      hit = { card, etag: `"${createHash('sha256').update(JSON.stringify(card)).digest('base64url').slice(0, 27)}"` };
      this.cache.set(key, hit);
    }
    return hit;
  }

  /** The authenticated card: adds who the caller is and the JSON Schema of every method. */
  extendedCard(principal: Principal, version: ProtocolVersion = '1.0'): Card {
    const base = this.v1Card();
    const caps = base['capabilities'] as Card;
    const ext = (caps['extensions'] as Card[])[0] as Card;
    this.extendedSchemas ??= Object.fromEntries(
      this.methods.map((m) => [
        m.name,
        {
          summary: m.summary,
          kind: m.kind,
          permission: m.permission,
          params: z.toJSONSchema(m.params, { io: 'input', unrepresentable: 'any' }),
          result: z.toJSONSchema(m.result, { unrepresentable: 'any' }),
        },
      ]),
    );
    const card: Card = {
      ...base,
      capabilities: {
        ...caps,
        extensions: [
          {
            ...ext,
            params: {
              ...(ext['params'] as Card),
              principal: principal.id,
              admin: principal.admin,
              namespaces: namespacesOf(principal),
              roles: { ...principal.roles },
              methodSchemas: this.extendedSchemas,
            },
          },
        ],
      },
    };
    return version === '0.3' ? { ...card, ...this.v03Fields() } : card;
  }

  private v1Card(): Card {
    const o = this.opts;
    const card: Card = {
      name: o.name,
      description: o.description,
      supportedInterfaces: [
        { url: o.endpoint, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: o.endpoint, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ],
      provider: { organization: 'CleverAgents', url: 'https://github.com/cleveragents' },
      version: o.version,
      capabilities: {
        streaming: true,
        pushNotifications: o.pushNotifications,
        extendedAgentCard: true,
        extensions: [this.extension()],
      },
      defaultInputModes: ['text/plain', 'application/json'],
      defaultOutputModes: ['text/plain', 'application/json'],
      skills: SKILLS,
    };
    if (o.documentationUrl) card['documentationUrl'] = o.documentationUrl;
    if (o.auth === 'bearer') {
      const { schemes, requirements } = this.v1Security();
      card['securitySchemes'] = schemes;
      card['securityRequirements'] = requirements;
    }
    return card;
  }

  /** The CleverAgents extension as the v1 card declares it: its versions, methods and (OIDC) issuer. */
  private extension(): Card {
    const o = this.opts;
    const extension = this.methods.filter((m) => m.surface === 'extension');
    const addedIn: Record<string, string[]> = {};
    for (const m of extension) if (m.since && m.since !== '1.0') (addedIn[m.since] ??= []).push(m.name);
    return {
      uri: EXTENSION_URI,
      description: 'CleverAgents platform operations (_cleveragents/… methods).',
      required: false,
      // `versions`: the minor versions served, newest first; ask for one with the
      // CleverAgents-Extension-Version header (stdio: initialize's extensionVersion).
      params: {
        version: EXTENSION_VERSION,
        versions: [...EXTENSION_VERSIONS],
        methods: extension.map((m) => m.name),
        addedIn,
        ...(o.auth === 'bearer' && o.oidc
          ? {
              auth: {
                issuer: o.oidc.issuer,
                ...(o.oidc.clientId ? { oauthClientId: o.oidc.clientId } : {}),
              },
            }
          : {}),
      },
    };
  }

  /** The v1 security schemes of a server that wants a token: API key, bearer, and with OIDC the device flow. */
  private v1Security(): { schemes: Card; requirements: Card[] } {
    const o = this.opts;
    const schemes: Card = {
      apiKey: { apiKeySecurityScheme: { description: API_KEY_TEXT, location: 'header', name: API_KEY_HEADER } },
      bearer: { httpAuthSecurityScheme: { description: o.oidc ? BEARER_OIDC_TEXT : BEARER_TEXT, scheme: 'Bearer' } },
    };
    const requirements: Card[] = [{ schemes: { apiKey: { list: [] } } }, { schemes: { bearer: { list: [] } } }];
    if (o.oidc) {
      const { deviceAuthorizationUrl, tokenUrl } = o.oidc;
      schemes['oauth2'] = {
        oauth2SecurityScheme: {
          description: OAUTH_TEXT,
          // Until discovery has read the device endpoints, clients find them at the metadata URL.
          flows:
            deviceAuthorizationUrl && tokenUrl
              ? { deviceCode: { deviceAuthorizationUrl, tokenUrl, scopes: OAUTH_SCOPES } }
              : {},
          oauth2MetadataUrl: o.oidc.metadataUrl,
        },
      };
      requirements.push({ schemes: { oauth2: { list: REQUIRED_SCOPES } } });
    }
    return { schemes, requirements };
  }

  /** What a v0.3 client reads: url, preferredTransport, protocolVersion and v0.3 security shapes. */
  private v03Fields(): Card {
    const o = this.opts;
    const fields: Card = {
      url: o.endpoint,
      preferredTransport: 'JSONRPC',
      protocolVersion: '0.3.0',
      additionalInterfaces: [{ url: o.endpoint, transport: 'JSONRPC' }],
      supportsAuthenticatedExtendedCard: true,
    };
    if (o.auth === 'bearer') {
      const schemes: Card = {
        apiKey: { type: 'apiKey', in: 'header', name: API_KEY_HEADER, description: API_KEY_TEXT },
        bearer: { type: 'http', scheme: 'bearer', description: o.oidc ? BEARER_OIDC_TEXT : BEARER_TEXT },
      };
      const security: Card[] = [{ apiKey: [] }, { bearer: [] }];
      if (o.oidc) {
        // v0.3 has no device code flow: its clients read the endpoints from the metadata URL.
        schemes['oauth2'] = {
          type: 'oauth2',
          description: OAUTH_TEXT,
          flows: {},
          oauth2MetadataUrl: o.oidc.metadataUrl,
        };
        security.push({ oauth2: REQUIRED_SCOPES });
      }
      fields['securitySchemes'] = schemes;
      fields['security'] = security;
    }
    return fields;
  }
}
