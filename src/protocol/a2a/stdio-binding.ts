import { z } from 'zod';

/**
 * The stdio binding's own methods (DESIGN.md §3.5): not A2A operations, so not in the method
 * table, but written once here for the server and the client alike.
 */
export const STDIO_METHODS = {
  /** The handshake, first on every connection: negotiates the protocol and extension versions. */
  initialize: 'initialize',
  /** Notification from the client: stop the request with this id. */
  cancel: '$/cancelRequest',
  /** Notification from the server: one event of a streaming request, before its final response. */
  streamEvent: '_cleveragents/stream/event',
} as const;

/** What `initialize` takes. */
export const InitializeParams = z.object({
  protocolVersion: z.string().optional(),
  extensions: z.array(z.string()).optional(),
  /** The extension minor version wanted (default: the current one). */
  extensionVersion: z.string().optional(),
  clientInfo: z.object({ name: z.string(), version: z.string().optional() }).optional(),
});
export type InitializeParams = z.infer<typeof InitializeParams>;

/** What a `_cleveragents/stream/event` notification carries. */
export interface StreamEventParams {
  requestId: string | number | null;
  seq: number;
  event: unknown;
}
