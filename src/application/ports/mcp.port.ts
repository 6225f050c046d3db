import type { McpServer } from '../../domain/registry/skill.definition.ts';

/** A tool an MCP server lists. */
export interface McpToolInfo {
  /** The server's name of the tool. */
  name: string;
  description: string;
  /** Its input JSON Schema (an object schema). */
  inputSchema: Record<string, unknown>;
  /** The server's `readOnlyHint` annotation (false when absent). */
  readOnly: boolean;
}

export interface McpCallResult {
  ok: boolean;
  /** One line for logs and progress. */
  summary: string;
  /** The tool's content as text (text parts joined; other parts named), truncated to a sane size. */
  output: string;
}

/** Why an MCP server could not be used (connect, list): the message says which server and why. */
export class McpUnavailable extends Error {
  readonly server: string;
  readonly hint: string;

  constructor(server: string, message: string, hint: string) {
    super(message);
    this.server = server;
    this.hint = hint;
    this.name = 'McpUnavailable';
  }
}

/**
 * Whose server it is: the namespace of the skill that declares it. On a server its grants decide
 * how the server runs (confined; with the host network only where it holds private-network).
 */
export interface McpUse {
  namespace: string;
}

/**
 * The MCP servers skills declare, connected on first use and kept while they live. A server is
 * known by its whole definition (two skills naming the same definition share one connection).
 * Nothing here hangs: connecting, listing and each call have time limits, and a server that
 * crashed is started again on the next use.
 */
export interface McpHub {
  /** The server's tools (connects first when needed). Throws McpUnavailable. */
  listTools(server: McpServer, signal: AbortSignal, use?: McpUse): Promise<McpToolInfo[]>;
  /**
   * Calls a tool. Never throws: a tool error, a timeout, a crashed or unreachable server all come
   * back as `ok: false` with a summary saying which.
   */
  callTool(
    server: McpServer,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    use?: McpUse,
  ): Promise<McpCallResult>;
  /** Stops every server process and closes every connection. */
  close(): Promise<void>;
}
