/**
 * The transport the MCP SDK reaches a server by: a child over stdio (started confined when a launch
 * is given) or a streamable-HTTP session. Only types are imported here: mcp-connection.ts loads
 * the SDK on first use (start-up time of the CLI).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpServer } from '../../domain/registry/skill.definition.ts';
import type { PreparedCommand } from '../tools/confinement.types.ts';

/** The SDK modules mcp-connection.ts imports on first use. */
export interface Sdk {
  Client: typeof Client;
  StdioClientTransport: typeof StdioClientTransport;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  ToolListChangedNotificationSchema: typeof ToolListChangedNotificationSchema;
  McpError: typeof McpError;
}
/** The transport to `server`: its command (or `launch`, confined) over stdio, or its URL (with `fetch`). */
export function transportFor(
  sdk: Sdk,
  server: McpServer,
  launch: PreparedCommand | undefined,
  fetch: typeof globalThis.fetch | undefined,
): StdioClientTransport | StreamableHTTPClientTransport {
  return 'command' in server
    ? new sdk.StdioClientTransport(
        launch
          ? // Confined: bubblewrap builds the server's environment itself (--clearenv, its allowlist).
            { command: launch.program, args: launch.args, env: launch.env, cwd: launch.cwd, stderr: 'pipe' }
          : {
              command: server.command,
              args: server.args ?? [],
              // The SDK adds its minimal environment (PATH, HOME, USER, …); never the agent's own.
              env: { ...server.env },
              ...(server.cwd !== undefined ? { cwd: server.cwd } : {}),
              stderr: 'pipe',
            },
      )
    : new sdk.StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { ...server.headers } },
        ...(fetch ? { fetch } : {}),
      });
}
