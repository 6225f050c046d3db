/** Entities that ship with CleverAgents: listed with the rest, changed and removed by no one. */
import type { ActionDefinition } from './action.definition.ts';
import type { ActorDefinition } from './actor.definition.ts';
import type { AutomationProfileDefinition } from './automation-profile.definition.ts';
import type { ToolDefinition } from './tool.definition.ts';

const obj = (properties: Record<string, unknown>, required: string[]): Record<string, unknown> => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});
const path = { type: 'string', description: 'a path relative to the sandbox root' };

const int = (minimum: number, maximum: number, description: string): Record<string, unknown> => ({
  type: 'integer',
  minimum,
  maximum,
  description,
});

/**
 * The coding tools a model works with (issue #37): reading by ranges and searching instead of
 * being handed the whole project, exact edits, a confined shell. Their descriptions are what the
 * model reads: short, precise, saying what each answer looks like and when to use which.
 */
const CODING_TOOL_DEFINITIONS: readonly ToolDefinition[] = [
  {
    name: 'builtin/read',
    description:
      'Read a text file. Lines come numbered ("     12\t…"; the number and tab are not part of the file), 2000 from `offset` by default; a footer gives the range shown, the total, and the offset to read on. Lines over 2000 characters are cut. Binary files and files over 5 MB are refused. Read a file before editing it.',
    source: 'builtin',
    inputSchema: obj(
      {
        path,
        offset: int(1, Number.MAX_SAFE_INTEGER, 'first line to show, 1-based (default 1)'),
        limit: int(1, 100000, 'how many lines (default 2000)'),
      },
      ['path'],
    ),
    readOnly: true,
    writes: false,
  },
  {
    name: 'builtin/grep',
    description:
      'Search file contents with a JavaScript regular expression, line by line. Skips .git, node_modules, .gitignored and binary files. outputMode "content" (default) gives path:line:text (context lines as path-line-text), "files" the paths of matching files, "count" path:matches. At most maxResults results (default 100), then how many more.',
    source: 'builtin',
    inputSchema: obj(
      {
        pattern: {
          type: 'string',
          minLength: 1,
          description: 'a JavaScript regular expression, e.g. "function\\s+load"',
        },
        path: {
          type: 'string',
          description: 'a directory or file to search, relative to the root (default: the root)',
        },
        glob: {
          type: 'string',
          description: 'only files matching this glob, relative to path, e.g. "**/*.ts" or "src/**/*.{ts,tsx}"',
        },
        ignoreCase: { type: 'boolean' },
        context: int(0, 20, 'lines to show before and after each match (content mode)'),
        maxResults: int(1, 1000, 'matching lines (content) or files (files, count) to show; default 100'),
        outputMode: { type: 'string', enum: ['content', 'files', 'count'] },
      },
      ['pattern'],
    ),
    readOnly: true,
    writes: false,
  },
  {
    name: 'builtin/glob',
    description:
      'Find files by name pattern ("**/*.test.ts", "src/**/index.{ts,js}"; without a "/" the pattern matches names at any depth). Newest-modified first, at most 200. Skips .git, node_modules and .gitignored files.',
    source: 'builtin',
    inputSchema: obj(
      {
        pattern: { type: 'string', minLength: 1 },
        path: { type: 'string', description: 'the directory to search, relative to the root (default: the root)' },
      },
      ['pattern'],
    ),
    readOnly: true,
    writes: false,
  },
  {
    name: 'builtin/list',
    description:
      'List a directory as a tree, directories marked with "/" (those at the depth limit with their entry count), symlinks with "@". Skips .git, node_modules and .gitignored entries; at most 500 entries.',
    source: 'builtin',
    inputSchema: obj({ path, depth: int(1, 10, 'levels to show (default 2)') }, []),
    readOnly: true,
    writes: false,
  },
  {
    name: 'builtin/edit',
    description:
      'Edit a file by exact replacement. Each oldText must occur exactly once in the file (or set replaceAll) — copy it from read output without the line numbers, with enough surrounding lines to be unique. Edits apply in order, each to the result of the one before, and all or none: if one fails, nothing is written and the answer says why (for text not found, the closest region of the file). Keeps the line endings of the file. Answers with the diff.',
    source: 'builtin',
    inputSchema: obj(
      {
        path,
        edits: {
          type: 'array',
          minItems: 1,
          maxItems: 50,
          items: obj(
            {
              oldText: { type: 'string', minLength: 1, description: 'the exact text to replace' },
              newText: { type: 'string', description: 'what replaces it' },
              replaceAll: { type: 'boolean', description: 'replace every occurrence (default: it must occur once)' },
            },
            ['oldText', 'newText'],
          ),
        },
      },
      ['path', 'edits'],
    ),
    readOnly: false,
    writes: true,
    checkpoint: true,
  },
  {
    name: 'builtin/write',
    description:
      'Create a file, or overwrite one with new content (parent directories are created). To change part of an existing file, use edit.',
    source: 'builtin',
    inputSchema: obj({ path, content: { type: 'string', description: 'the whole new content' } }, ['path', 'content']),
    readOnly: false,
    writes: true,
    checkpoint: true,
  },
  {
    name: 'builtin/bash',
    description:
      'Run a command line with bash -c (sh where bash is missing) in the project, confined: it can write only inside the project, reaches the network only when the policy allows, and is killed with everything it started at the time limit. Pipes, &&, cd and redirections work; each call starts a fresh shell (cd does not carry over). Answers with the exit code and the output (stdout and stderr together; of a long output its first and last lines). Prefer read, grep, glob and edit for files.',
    source: 'builtin',
    inputSchema: obj(
      {
        command: { type: 'string', minLength: 1 },
        cwd: { type: 'string', description: 'the directory to start in, relative to the root (default: the root)' },
        timeoutMs: int(1, 3600000, 'time limit in ms (it can shorten the limit set for the call, not extend it)'),
      },
      ['command'],
    ),
    readOnly: false,
    writes: true,
    checkpoint: true,
  },
];

export const BUILTIN_TOOLS: readonly ToolDefinition[] = [
  ...CODING_TOOL_DEFINITIONS,
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
        pattern: { type: 'string', minLength: 1, format: 'regex' },
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
        pattern: { type: 'string', minLength: 1, format: 'regex', description: 'a JavaScript regular expression' },
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

/**
 * The names of the coding tools — what a project's chat always offers, and what a plan's actors
 * get (with run-command and the git views).
 */
export const CODING_TOOLS: readonly string[] = CODING_TOOL_DEFINITIONS.map((t) => t.name);

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
