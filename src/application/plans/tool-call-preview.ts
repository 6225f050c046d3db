import { splitCommandLine } from '../../domain/plan/command-line.ts';
import type { ApprovalRequest } from '../../domain/plan/approval-request.ts';
import type { ToolDefinition } from '../../domain/registry/tool.definition.ts';

/** `command: "prettier --write src"` for run-command becomes program + args (split, never shell-run). */
export function normalizeArgs(tool: string, args: Record<string, unknown>): Record<string, unknown> {
  if (!tool.endsWith('/run-command') || typeof args['command'] !== 'string') return args;
  const { command, ...rest } = args;
  const [program, ...words] = splitCommandLine(command);
  return { ...rest, program: program ?? '', args: words };
}

/**
 * The program and arguments a call runs, for the policy (undefined: it runs no command). Mirrors
 * how the tool runners build the command: run-command's program + args; a `command` tool's
 * program and args, then the call's `args` and `paths`.
 */
export function commandOfCall(tool: ToolDefinition, normalized: Record<string, unknown>): string[] | undefined {
  const strings = (v: unknown): string[] =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  if (tool.source === 'command' && tool.command)
    return [
      tool.command.program,
      ...(tool.command.args ?? []),
      ...strings(normalized['args']),
      ...strings(normalized['paths']),
    ];
  if (tool.name.endsWith('/run-command') && typeof normalized['program'] === 'string')
    return [normalized['program'], ...strings(normalized['args'])];
  if (tool.name === 'builtin/bash' && typeof normalized['command'] === 'string')
    return shellWords(normalized['command']);
  return undefined;
}

/**
 * A shell command line as words for policy rules and "always" answers: its words when it is one
 * plain command, else `bash -c <line>` whole — so a rule or an answer for `npm test` never covers
 * `npm test; rm -rf ~`.
 */
export function shellWords(line: string): string[] {
  if (!/[;&|<>$`()\n*?{}[\]~!#]/.test(line)) {
    try {
      const words = splitCommandLine(line);
      if (words.length > 0) return words;
    } catch {
      // Quotes that do not close: taken whole below.
    }
  }
  return ['bash', '-c', line];
}

/** A tool call's arguments on one line (file contents left out), for status messages. */
export function argSummary(args: Record<string, unknown>): string {
  const s = Object.entries(args)
    .filter(([k]) => k !== 'content')
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return s.length > 120 ? `${s.slice(0, 117)}…` : s;
}

/** What a write would do, for an approval request. */
export function previewOf(tool: string, args: Record<string, unknown>): string {
  const text = (v: unknown): string => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));
  const path = text(args['path']);
  if (tool.endsWith('/write-file')) {
    const content = text(args['content']);
    return [
      `+++ ${path}`,
      ...content
        .split('\n')
        .slice(0, 40)
        .map((l) => `+${l}`),
    ].join('\n');
  }
  if (tool.endsWith('/edit-file'))
    return [`--- ${path}`, `+++ ${path}`, `-${text(args['find'])}`, `+${text(args['replace'])}`].join('\n');
  if (tool.endsWith('/run-command'))
    return `$ ${typeof args['command'] === 'string' ? args['command'] : [args['program'], ...((args['args'] as unknown[]) ?? [])].join(' ')}`;
  return JSON.stringify(args, null, 2);
}

/**
 * What an approval request carries of what a call would do: `preview` (the diff, the command line,
 * or — nothing better known — previewOf), with the diff, or the command and its directory, apart.
 */
export function previewFields(
  tool: string,
  args: Record<string, unknown>,
  p: { diff?: string | undefined; command?: string | undefined; cwd?: string | undefined },
): Pick<ApprovalRequest, 'preview' | 'diff' | 'command' | 'cwd'> {
  return {
    preview: p.diff ?? (p.command !== undefined ? `$ ${p.command}` : previewOf(tool, args)),
    ...(p.diff !== undefined ? { diff: p.diff } : {}),
    ...(p.command !== undefined ? { command: p.command, cwd: p.cwd ?? '.' } : {}),
  };
}
