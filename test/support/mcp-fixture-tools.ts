/**
 * The fixture MCP server's tools, written once with the SDK's `McpServer` and served over stdio
 * (mcp-fixture-server.ts) and streamable HTTP (mcp-fixture-http.ts).
 */
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** A 1×1 PNG, the `mixed` tool's image part. */
export const FIXTURE_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
/** The `mixed` tool's audio part (not real audio: only its size and type matter). */
export const FIXTURE_AUDIO_BASE64 = Buffer.from('not really a wave file').toString('base64');
/** How many tools `FIXTURE_MODE=many` lists, and how many per page. */
export const MANY_TOOLS = 150;
export const MANY_PAGE = 50;

/** What one running fixture shares between its servers (one per stdio process, one per HTTP session). */
export interface FixtureState {
  /** How many `slow` calls ended because the client cancelled them (notifications/cancelled). */
  cancelled: number;
  /** How many `slow` calls are under way now (a test waits for its call to have arrived). */
  running: number;
}

export interface FixtureContext {
  /** Which server this is in its process (1, 2, …: an HTTP fixture makes one per session). */
  instance: number;
  state: FixtureState;
  /** Where `write_note` writes (stdio: $FIXTURE_DIR). */
  fixtureDir: string | undefined;
  /** What `crash` does: the stdio fixture exits, the HTTP fixture drops every connection. */
  crash(): void;
  /** List MANY_TOOLS generated tools over pages instead of the regular ones. */
  many?: boolean;
}

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });
const readOnly = { readOnlyHint: true };

/** A fixture server with every tool registered (connect it to a transport). */
export function createFixtureServer(ctx: FixtureContext): McpServer {
  const server = new McpServer({ name: 'cleveragents-fixture', version: '1.0.0' });

  server.registerTool(
    'echo',
    { description: 'Answers its text.', inputSchema: { text: z.string() }, annotations: readOnly },
    ({ text: t }) => text(t),
  );
  server.registerTool(
    'add',
    { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() }, annotations: readOnly },
    ({ a, b }) => text(String(a + b)),
  );
  server.registerTool(
    'write_note',
    {
      description: 'Writes a note into the fixture directory.',
      inputSchema: { name: z.string(), text: z.string() },
      annotations: { readOnlyHint: false },
    },
    ({ name, text: body }) => {
      if (!ctx.fixtureDir) return { isError: true, content: [{ type: 'text', text: 'FIXTURE_DIR is not set' }] };
      const file = basename(name);
      writeFileSync(join(ctx.fixtureDir, file), body);
      return text(`wrote ${Buffer.byteLength(body)} bytes to ${file}`);
    },
  );
  server.registerTool(
    'slow',
    { description: 'Waits, then answers (stops when cancelled).', inputSchema: { ms: z.number().int().min(0) } },
    async ({ ms }, extra) => {
      ctx.state.running += 1;
      const finished = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(true), ms);
        extra.signal.addEventListener('abort', () => (clearTimeout(timer), resolve(false)), { once: true });
      });
      ctx.state.running -= 1;
      if (!finished) ctx.state.cancelled += 1;
      return text(finished ? `slept ${ms} ms` : 'cancelled');
    },
  );
  server.registerTool(
    'cancelled',
    { description: 'How many slow calls were cancelled by the client.', annotations: readOnly },
    () => text(String(ctx.state.cancelled)),
  );
  server.registerTool('running', { description: 'How many slow calls are under way.', annotations: readOnly }, () =>
    text(String(ctx.state.running)),
  );
  server.registerTool('crash', { description: 'The server dies ("boom" on stderr, exit 1).' }, () => {
    ctx.crash();
    return new Promise<CallToolResult>(() => {});
  });
  server.registerTool('fail', { description: 'A tool error (isError).' }, () => ({
    isError: true,
    content: [{ type: 'text', text: 'it failed on purpose' }],
  }));
  server.registerTool(
    'getenv',
    { description: 'An environment variable of the server, or (unset).', inputSchema: { name: z.string() } },
    ({ name }) => text(process.env[name] ?? '(unset)'),
  );
  server.registerTool(
    'log',
    { description: 'Writes its text to stderr.', inputSchema: { text: z.string() } },
    ({ text: t }) => (process.stderr.write(`${t}\n`), text('logged')),
  );
  server.registerTool('pid', { description: "The server's process id.", annotations: readOnly }, () =>
    text(String(process.pid)),
  );
  server.registerTool('instance', { description: 'Which server of its process this is.' }, () =>
    text(String(ctx.instance)),
  );
  server.registerTool('mixed', { description: 'One part of each content kind.' }, () => ({
    content: [
      { type: 'text', text: 'first' },
      { type: 'image', data: FIXTURE_PNG_BASE64, mimeType: 'image/png' },
      { type: 'audio', data: FIXTURE_AUDIO_BASE64, mimeType: 'audio/wav' },
      { type: 'resource', resource: { uri: 'file:///notes/a.txt', text: 'embedded text' } },
      { type: 'resource', resource: { uri: 'file:///bin/blob', blob: FIXTURE_PNG_BASE64, mimeType: 'image/png' } },
      { type: 'resource_link', uri: 'file:///notes/b.txt', name: 'b.txt' },
    ],
  }));
  server.registerTool(
    'structured',
    { description: 'Structured content only.', outputSchema: { count: z.number(), names: z.array(z.string()) } },
    () => ({ content: [], structuredContent: { count: 2, names: ['a', 'b'] } }),
  );
  server.registerTool(
    'big',
    { description: 'Answers `lines` lines of 99 x.', inputSchema: { lines: z.number().int().min(0) } },
    ({ lines }) => text(Array.from({ length: lines }, () => 'x'.repeat(99)).join('\n')),
  );
  server.registerTool(
    'add_tool',
    { description: 'Registers another tool (the server sends tools/list_changed).', inputSchema: { name: z.string() } },
    ({ name }) => {
      server.registerTool(name, { description: 'added at run time', annotations: readOnly }, () => text('added'));
      return text(`added ${name}`);
    },
  );

  if (ctx.many) listManyTools(server);
  return server;
}

/** MANY_TOOLS generated tools, listed MANY_PAGE at a time with a cursor (McpServer itself lists all at once). */
function listManyTools(server: McpServer): void {
  const tools = Array.from({ length: MANY_TOOLS }, (_, i) => {
    const name = `tool_${String(i).padStart(3, '0')}`;
    server.registerTool(name, { description: `generated tool ${i}` }, () => text(name));
    return { name, description: `generated tool ${i}`, inputSchema: { type: 'object' as const, properties: {} } };
  });
  server.server.removeRequestHandler('tools/list');
  server.server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const start = Number(request.params?.cursor ?? 0);
    const end = start + MANY_PAGE;
    return { tools: tools.slice(start, end), ...(end < tools.length ? { nextCursor: String(end) } : {}) };
  });
}
