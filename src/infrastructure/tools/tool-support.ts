/** Shared pieces of the built-in tools: argument readers, result builders, walking a sandbox. */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { CommandOutputChunk, SandboxInfo, ToolCallResult } from '../../application/index.ts';
import type { CommandConfinement } from './confinement.ts';
import type { NetworkAccess } from './confinement.types.ts';

/** A tool call that cannot go on; its message becomes the result's summary. */
export class ToolFailure extends Error {
  readonly output: string;

  constructor(message: string, output = '') {
    super(message);
    this.output = output;
    this.name = 'ToolFailure';
  }
}

/** What every tool implementation receives. */
export interface ToolContext {
  sandbox: SandboxInfo;
  args: Record<string, unknown>;
  signal: AbortSignal;
  timeoutMs: number;
  /** How commands run. */
  confinement: CommandConfinement;
  network: NetworkAccess;
  env?: Readonly<Record<string, string>> | undefined;
  /** Commands: each piece of output as it comes. */
  onOutput?: ((chunk: CommandOutputChunk) => void) | undefined;
}

export const MAX_TEXT_OUTPUT = 1024 * 1024;

export const ok = (
  summary: string,
  output = '',
  filesTouched: string[] = [],
  maxOutput = MAX_TEXT_OUTPUT,
): ToolCallResult => ({
  ok: true,
  summary,
  output: cap(output, maxOutput),
  filesTouched,
});
export const failed = (summary: string, output = ''): ToolCallResult => ({
  ok: false,
  summary,
  output: cap(output),
  filesTouched: [],
});

/** Truncates text to `max` bytes (at a character boundary), saying so. */
export function cap(text: string, max = MAX_TEXT_OUTPUT): string {
  if (Buffer.byteLength(text) <= max) return text;
  return `${Buffer.from(text)
    .subarray(0, max)
    .toString('utf8')
    .replace(/\uFFFD$/, '')}\n… [truncated at ${max} bytes]`;
}

export function str(args: Record<string, unknown>, name: string): string;
export function str(args: Record<string, unknown>, name: string, optional: true): string | undefined;
export function str(args: Record<string, unknown>, name: string, optional = false): string | undefined {
  const v = args[name];
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'string') throw new ToolFailure(`argument ${name} must be a string`);
  return v;
}

export function int(
  args: Record<string, unknown>,
  name: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  const v = args[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new ToolFailure(`argument ${name} must be an integer between ${min} and ${max}`);
  return v;
}

export function bool(args: Record<string, unknown>, name: string): boolean | undefined {
  const v = args[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') throw new ToolFailure(`argument ${name} must be a boolean`);
  return v;
}

export function strings(args: Record<string, unknown>, name: string): string[] | undefined {
  const v = args[name];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || !v.every((x): x is string => typeof x === 'string'))
    throw new ToolFailure(`argument ${name} must be an array of strings`);
  return v;
}

/** Files larger than this are not read, edited or searched. */
export const MAX_FILE_BYTES = 5 * 1024 * 1024;

/** True when the buffer looks binary (a NUL byte in its first 8000 bytes, as git decides). */
export const isBinary = (b: Buffer): boolean => b.subarray(0, 8000).includes(0);

export interface WalkEntry {
  /** Absolute path. */
  abs: string;
  /** Relative to the walk's start, `/`-separated. */
  rel: string;
  symlink: boolean;
}

/**
 * The files under `dir` (regular files and symlinks, which are not followed), skipping `.git`,
 * sorted, at most `limit` entries visited.
 */
export async function walkFiles(
  dir: string,
  limit: number,
  signal: AbortSignal,
): Promise<{ files: WalkEntry[]; truncated: boolean }> {
  const files: WalkEntry[] = [];
  let visited = 0;
  const visit = async (abs: string, rel: string): Promise<boolean> => {
    const entries = (await readdir(abs, { withFileTypes: true })).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    for (const e of entries) {
      if (signal.aborted || ++visited > limit) return false;
      if (e.name === '.git') continue;
      const childAbs = path.join(abs, e.name);
      const childRel = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (!(await visit(childAbs, childRel))) return false;
      } else if (e.isFile() || e.isSymbolicLink())
        files.push({ abs: childAbs, rel: childRel, symlink: e.isSymbolicLink() });
    }
    return true;
  };
  const complete = await visit(dir, '');
  return { files, truncated: !complete };
}
