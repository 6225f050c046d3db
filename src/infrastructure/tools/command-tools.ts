/** run-command, registry `command` tools, git-status and git-diff. */
import { stat } from 'node:fs/promises';
import type { ToolCallResult } from '../../application/index.js';
import type { ToolDefinition } from '../../domain/registry/entities.js';
import { gitOut, snapshotTree } from '../sandbox/git.js';
import { changedPaths, diffTrees } from '../sandbox/sandbox-diff.js';
import { lexicalRel, resolveInSandbox } from './path-guard.js';
import { runProcess } from './process-runner.js';
import { bool, int, ok, str, strings, ToolFailure, type ToolContext } from './tool-support.js';

/**
 * builtin/run-command. The call's own `timeoutMs` can shorten the request's limit, never extend it
 * (the limit belongs to whoever runs the plan, not to the actor choosing the arguments).
 */
export async function runCommandTool(ctx: ToolContext): Promise<ToolCallResult> {
  const { sandbox, args } = ctx;
  const program = str(args, 'program');
  if (program === '') throw new ToolFailure('argument program must not be empty');
  const argv = strings(args, 'args') ?? [];
  const cwdArg = str(args, 'cwd', true);
  const cwd = await resolveInSandbox(sandbox.root, cwdArg ?? '.');
  if (!(await stat(cwd.real).catch(() => undefined))?.isDirectory())
    throw new ToolFailure(`cwd ${cwd.rel || '.'} is not a directory`);
  const asked = int(args, 'timeoutMs', 1, 3_600_000);
  const timeoutMs = asked === undefined ? ctx.timeoutMs : Math.min(asked, ctx.timeoutMs);
  return runInSandbox(ctx, program, argv, cwd.real, timeoutMs);
}

/**
 * A registry tool with `source: command`: runs `command.program` with `command.args`, then each
 * string of `args.args` (an array, passed as is), then each of `args.paths` (an array of sandbox
 * paths: each must stay inside the sandbox, and is passed relative to the root, `./`-prefixed when
 * it starts with `-` so it cannot read as an option; for a tool that `writes`, none may be in
 * `.git`). Other arguments are ignored. The working
 * directory is the sandbox root; the time limit is `command.timeoutMs`, else the request's.
 */
export async function commandTool(ctx: ToolContext, tool: ToolDefinition): Promise<ToolCallResult> {
  const command = tool.command;
  if (!command) throw new ToolFailure(`tool ${tool.name} has no command`);
  const extra = strings(ctx.args, 'args') ?? [];
  const paths: string[] = [];
  for (const p of strings(ctx.args, 'paths') ?? []) paths.push(await pathArgument(ctx.sandbox.root, p, tool.writes));
  return runInSandbox(
    ctx,
    command.program,
    [...(command.args ?? []), ...extra, ...paths],
    ctx.sandbox.root,
    command.timeoutMs ?? ctx.timeoutMs,
  );
}

async function pathArgument(root: string, p: string, write: boolean): Promise<string> {
  await resolveInSandbox(root, p, { write });
  const rel = lexicalRel(root, p);
  if (rel === '') return '.';
  return rel.startsWith('-') ? `./${rel}` : rel;
}

/**
 * Runs a program in the sandbox; the files it touched are the difference between snapshots of the
 * work tree taken before and after (content, not timestamps: a file rewritten with the same bytes
 * was not touched; one changed again after an earlier change was).
 */
async function runInSandbox(
  ctx: ToolContext,
  program: string,
  argv: string[],
  cwd: string,
  timeoutMs: number,
): Promise<ToolCallResult> {
  const { sandbox, signal } = ctx;
  const force = sandbox.kind === 'copy';
  const before = await snapshotTree(sandbox.root, force);
  const r = await runProcess({ program, args: argv, cwd, timeoutMs, signal });
  let filesTouched: string[] = [];
  let note = '';
  try {
    filesTouched = await changedPaths(sandbox.root, before, await snapshotTree(sandbox.root, force));
  } catch (e) {
    note = `\n[could not determine the files the command changed: ${(e as Error).message}]`;
  }
  const shown = [program, ...argv].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
  const output = r.output + note;
  const touched =
    filesTouched.length > 0 ? `; ${filesTouched.length} file${filesTouched.length === 1 ? '' : 's'} changed` : '';
  if (r.spawnError !== undefined)
    return { ok: false, summary: `cannot run ${program}: ${r.spawnError}`, output, filesTouched, exitCode: null };
  if (r.aborted) return { ok: false, summary: `${shown}: cancelled${touched}`, output, filesTouched, exitCode: null };
  if (r.timedOut)
    return {
      ok: false,
      summary: `${shown}: killed after the ${timeoutMs} ms time limit${touched}`,
      output,
      filesTouched,
      exitCode: null,
    };
  if (r.exitCode === null)
    return {
      ok: false,
      summary: `${shown}: killed by ${r.signal ?? 'a signal'}${touched}`,
      output,
      filesTouched,
      exitCode: null,
    };
  return {
    ok: r.exitCode === 0,
    summary: `${shown}: exit ${r.exitCode}${touched}`,
    output,
    filesTouched,
    exitCode: r.exitCode,
  };
}

export async function gitStatusTool({ sandbox }: ToolContext): Promise<ToolCallResult> {
  const out = await gitOut(sandbox.root, ['status', '--porcelain=v1', '--untracked-files=all'], { confine: true });
  const n = out === '' ? 0 : out.split('\n').length;
  return ok(
    n === 0
      ? 'no changes since the last checkpoint'
      : `${n} path${n === 1 ? '' : 's'} changed since the last checkpoint`,
    out,
  );
}

/** The sandbox against its base: the whole work tree, or (staged) what is in its index. */
export async function gitDiffTool({ sandbox, args }: ToolContext): Promise<ToolCallResult> {
  const paths: string[] = [];
  for (const p of strings(args, 'paths') ?? []) {
    await resolveInSandbox(sandbox.root, p);
    paths.push(lexicalRel(sandbox.root, p) || '.');
  }
  const staged = bool(args, 'staged') ?? false;
  const to = staged
    ? await gitOut(sandbox.root, ['write-tree'], { confine: true })
    : await snapshotTree(sandbox.root, sandbox.kind === 'copy');
  const d = await diffTrees(sandbox.root, sandbox.baseCommit, to, paths);
  return ok(
    `${d.stats.files} file${d.stats.files === 1 ? '' : 's'} changed, +${d.stats.additions} −${d.stats.deletions}`,
    d.unified,
  );
}
