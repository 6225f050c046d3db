/** Entities that ship with CleverAgents: listed with the rest, changed and removed by no one. */
import type { ActionDefinition, ActorDefinition, AutomationProfileDefinition, ToolDefinition } from './entities.ts';

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
    inputSchema: obj({ path, startLine: { type: 'integer', minimum: 1 }, endLine: { type: 'integer', minimum: 1 } }, [
      'path',
    ]),
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
    inputSchema: obj(
      { path, find: { type: 'string', minLength: 1 }, replace: { type: 'string' }, expectOne: { type: 'boolean' } },
      ['path', 'find', 'replace'],
    ),
    readOnly: false,
    writes: true,
    checkpoint: true,
  },
  {
    name: 'builtin/list-files',
    description: 'List files under a directory, filtered by glob patterns.',
    source: 'builtin',
    inputSchema: obj(
      {
        path,
        include: { type: 'array', items: { type: 'string' } },
        exclude: { type: 'array', items: { type: 'string' } },
      },
      [],
    ),
    readOnly: true,
    writes: false,
  },
  {
    name: 'builtin/search-files',
    description: 'Search file contents with a regular expression.',
    source: 'builtin',
    inputSchema: obj(
      {
        pattern: { type: 'string', minLength: 1 },
        path,
        include: { type: 'array', items: { type: 'string' } },
        maxResults: { type: 'integer', minimum: 1, maximum: 10000 },
      },
      ['pattern'],
    ),
    readOnly: true,
    writes: false,
  },
  {
    name: 'builtin/replace-in-files',
    description: 'Replace a regular expression across the files matched by globs.',
    source: 'builtin',
    inputSchema: obj(
      {
        pattern: { type: 'string', minLength: 1, description: 'a JavaScript regular expression' },
        replacement: { type: 'string', description: '$1… refer to groups' },
        include: { type: 'array', items: { type: 'string' }, minItems: 1 },
        exclude: { type: 'array', items: { type: 'string' } },
        flags: { type: 'string', pattern: '^[gimsuy]*$' },
      },
      ['pattern', 'replacement', 'include'],
    ),
    readOnly: false,
    writes: true,
    checkpoint: true,
  },
  {
    name: 'builtin/run-command',
    description:
      'Run a command (no shell) inside the sandbox, with a time limit. `command` is a command line split into words like a shell would, but never run by one.',
    source: 'builtin',
    inputSchema: obj(
      {
        program: { type: 'string', minLength: 1 },
        args: { type: 'array', items: { type: 'string' } },
        command: { type: 'string', minLength: 1 },
        cwd: path,
        timeoutMs: { type: 'integer', minimum: 1, maximum: 3600000 },
      },
      [],
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

export const BUILTIN_ACTIONS: readonly ActionDefinition[] = [
  {
    name: 'builtin/replace',
    description: 'Replace a regular expression across the files matched by a glob.',
    arguments: {
      pattern: { type: 'string', required: true, description: 'a JavaScript regular expression' },
      replacement: { type: 'string', required: true, description: 'the replacement ($1… for groups)' },
      glob: { type: 'string', default: '**/*', description: 'which files (e.g. src/**/*.ts)' },
      flags: { type: 'string', default: 'g', description: 'regular expression flags' },
    },
    descriptionTemplate: 'Replace /{{pattern}}/ with "{{replacement}}" in {{glob}}',
    definitionOfDone: 'No match of /{{pattern}}/ remains in {{glob}}',
    steps: [
      {
        id: 'replace',
        description: 'replace across the matched files',
        tool: 'builtin/replace-in-files',
        args: { pattern: '{{pattern}}', replacement: '{{replacement}}', include: ['{{glob}}'], flags: '{{flags}}' },
      },
    ],
  },
  {
    name: 'builtin/run-command',
    description:
      'Run a command (a formatter, a codemod, a generator) in the sandbox and capture what it changed, to review, apply or roll back.',
    arguments: {
      command: {
        type: 'string',
        required: true,
        description: 'the command line (split like a shell would, never run by one)',
      },
    },
    descriptionTemplate: 'Run `{{command}}` in the sandbox',
    definitionOfDone: '`{{command}}` exits 0 and its changes are ready to review',
    steps: [
      { id: 'run', description: 'run the command', tool: 'builtin/run-command', args: { command: '{{command}}' } },
    ],
  },
  {
    name: 'builtin/goal',
    description:
      'Reach a goal stated in words: an LLM strategy actor plans it (read-only), an LLM execution actor carries it out in the sandbox.',
    arguments: {
      goal: { type: 'string', required: true, description: 'what the plan should achieve, in words' },
    },
    descriptionTemplate: '{{goal}}',
    definitionOfDone:
      "{{goal}}; the project's verify command (when it has one) exits 0, and every invariant still holds",
  },
];

export const BUILTIN_ACTOR_DEFINITIONS: readonly ActorDefinition[] = [
  {
    name: 'builtin/echo',
    description: 'Restates each message, streamed in chunks; needs no LLM and no network.',
    provider: 'builtin',
    model: 'echo',
  },
  {
    name: 'builtin/conformance',
    description: 'Behaves as the A2A TCK reference agent (messageId prefixes tck-*), for conformance kits.',
    provider: 'builtin',
    model: 'conformance',
  },
];

/**
 * The three profiles plans had before profiles were entities, with the same behaviour: `manual`
 * asks before every call of a tool that writes (calls of other tools run) and before the apply;
 * `trusted` runs every call and asks before the apply; `auto` asks nothing.
 */
export const BUILTIN_AUTOMATION_PROFILES: readonly AutomationProfileDefinition[] = [
  {
    name: 'builtin/manual',
    description: 'Approve every call of a tool that writes, and the apply.',
    default: 'ask',
    applyApproval: true,
    rules: [{ writes: false, decision: 'allow', reason: 'a tool that writes nothing needs no approval' }],
  },
  {
    name: 'builtin/trusted',
    description: 'Execute freely; the apply needs approval (the default).',
    default: 'allow',
    applyApproval: true,
    rules: [],
  },
  {
    name: 'builtin/auto',
    description: 'Execute and apply without asking.',
    default: 'allow',
    applyApproval: false,
    rules: [],
  },
];

/** The profile a plan gets when neither the request nor its projects name one. */
export const DEFAULT_AUTOMATION_PROFILE = 'builtin/trusted';

/**
 * Rules every plan keeps, whatever its action or project: given to its actors with the action's and
 * the project's own.
 */
export const GLOBAL_INVARIANTS: readonly string[] = [
  "Change only files inside the plan's sandbox; never reach outside the project.",
  'Do not delete, skip or weaken tests to make a check pass.',
  'Never write secrets (keys, tokens, passwords) into files or command lines.',
];
