/** Entities that ship with CleverAgents: listed with the rest, changed and removed by no one. */
import type { ActorDefinition, ToolDefinition } from './entities.js';

const obj = (properties: Record<string, unknown>, required: string[]): Record<string, unknown> => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});
const path = { type: 'string', description: 'a path relative to the sandbox root' };

export const BUILTIN_TOOLS: readonly ToolDefinition[] = [
  {
    name: 'builtin/read-file',
    description: 'Read a text file (optionally a line range).',
    source: 'builtin',
    inputSchema: obj({ path, startLine: { type: 'integer', minimum: 1 }, endLine: { type: 'integer', minimum: 1 } }, ['path']),
    readOnly: true,
    writes: false,
  },
  {
    name: 'builtin/write-file',
    description: 'Create or overwrite a file with the given content.',
    source: 'builtin',
    inputSchema: obj({ path, content: { type: 'string' } }, ['path', 'content']),
    readOnly: false,
    writes: true,
    checkpoint: true,
  },
  {
    name: 'builtin/edit-file',
    description: 'Replace exact text in a file (every occurrence, or the only one when expectOne).',
    source: 'builtin',
    inputSchema: obj({ path, find: { type: 'string', minLength: 1 }, replace: { type: 'string' }, expectOne: { type: 'boolean' } }, ['path', 'find', 'replace']),
    readOnly: false,
    writes: true,
    checkpoint: true,
  },
  {
    name: 'builtin/list-files',
    description: 'List files under a directory, filtered by glob patterns.',
    source: 'builtin',
    inputSchema: obj({ path, include: { type: 'array', items: { type: 'string' } }, exclude: { type: 'array', items: { type: 'string' } } }, []),
    readOnly: true,
    writes: false,
  },
  {
    name: 'builtin/search-files',
    description: 'Search file contents with a regular expression.',
    source: 'builtin',
    inputSchema: obj({ pattern: { type: 'string', minLength: 1 }, path, include: { type: 'array', items: { type: 'string' } }, maxResults: { type: 'integer', minimum: 1, maximum: 10000 } }, ['pattern']),
    readOnly: true,
    writes: false,
  },
  {
    name: 'builtin/run-command',
    description: 'Run a command (no shell) inside the sandbox, with a time limit.',
    source: 'builtin',
    inputSchema: obj(
      { program: { type: 'string', minLength: 1 }, args: { type: 'array', items: { type: 'string' } }, cwd: path, timeoutMs: { type: 'integer', minimum: 1, maximum: 3600000 } },
      ['program'],
    ),
    readOnly: false,
    writes: true,
    checkpoint: true,
  },
  {
    name: 'builtin/git-status',
    description: 'Show the sandbox working tree status (porcelain).',
    source: 'builtin',
    inputSchema: obj({}, []),
    readOnly: true,
    writes: false,
  },
  {
    name: 'builtin/git-diff',
    description: 'Show the unified diff of the sandbox against its base (optionally for some paths).',
    source: 'builtin',
    inputSchema: obj({ paths: { type: 'array', items: { type: 'string' } }, staged: { type: 'boolean' } }, []),
    readOnly: true,
    writes: false,
  },
];

export const BUILTIN_ACTOR_DEFINITIONS: readonly ActorDefinition[] = [
  { name: 'builtin/echo', description: 'Restates each message, streamed in chunks; needs no LLM and no network.', provider: 'builtin', model: 'echo' },
  {
    name: 'builtin/conformance',
    description: 'Behaves as the A2A TCK reference agent (messageId prefixes tck-*), for conformance kits.',
    provider: 'builtin',
    model: 'conformance',
  },
];
