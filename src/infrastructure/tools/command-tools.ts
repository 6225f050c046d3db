/** run-command, registry `command` tools, git-status and git-diff. */
import { stat } from 'node:fs/promises';
import type { ToolCallResult } from '../../application/index.ts';
import type { ToolDefinition } from '../../domain/registry/tool.definition.ts';
import { snapshotTree } from '../sandbox/git-stage.ts';
import { directGit, outOf } from '../sandbox/git.ts';
import { changedPaths, diffTrees, diffWorkTree } from '../sandbox/sandbox-diff.ts';
import { commandOutputOf, duration, modelOutputOf } from './command-output-forms.ts';
import { lexicalRel, resolveInSandbox } from './path-guard.ts';
import { runConfined } from './process-runner.ts';
import { bool, int, ok, str, strings, ToolFailure, type ToolContext } from './tool-support.ts';
import { messageOf } from '../../domain/errors.ts';

/**
 * builtin/run-command. The call's own `timeoutMs` can shorten the request's limit, never extend it
 * (the limit belongs to whoever runs the plan, not to the actor choosing the arguments).
 */
export async function runCommandTool(ctx: ToolContext): Promise<ToolCallResult> {
  const program = str(ctx.args, 'program');
  if (program === '') throw new ToolFailure('argument program must not be empty');
  const argv = strings(ctx.args, 'args') ?? [];
  const cwd = await commandCwd(ctx);
  return runInSandbox(ctx, { program, argv, cwd, timeoutMs: callTimeout(ctx) });
}

/** The call's `cwd` (default the root): a directory inside the sandbox, as its real path. */
export async function commandCwd(ctx: ToolContext): Promise<string> {
  const cwd = await resolveInSandbox(ctx.sandbox.root, str(ctx.args, 'cwd', true) ?? '.');
  if (!(await stat(cwd.real).catch(() => undefined))?.isDirectory())
    throw new ToolFailure(`cwd ${cwd.rel || '.'} is not a directory`);
  return cwd.real;
}

/** The call's own `timeoutMs`, never past the request's. */
export function callTimeout(ctx: ToolContext): number {
  const asked = int(ctx.args, 'timeoutMs', 1, 3_600_000);
  return asked === undefined ? ctx.timeoutMs : Math.min(asked, ctx.timeoutMs);
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
  return runInSandbox(ctx, {
    program: command.program,
    argv: [...(command.args ?? []), ...extra, ...paths],
    cwd: ctx.sandbox.root,
    timeoutMs: command.timeoutMs ?? ctx.timeoutMs,
  });
}

export async function pathArgument(root: string, p: string, write: boolean): Promise<string> {
  await resolveInSandbox(root, p, { write });
  const rel = lexicalRel(root, p);
  if (rel === '') return '.';
  return rel.startsWith('-') ? `./${rel}` : rel;
}

/** One command to run in the sandbox; `shown` names it in the summary (default: its words). */
export interface SandboxCommand {
  program: string;
  argv: readonly string[];
  /** Absolute, inside the sandbox. */
  cwd: string;
  timeoutMs: number;
  shown?: string | undefined;
}

/**
 * Runs a program in the sandbox, its output streamed to `ctx.onOutput`; the model gets the head and
 * the tail of the output, the record all of it (`commandOutput`). The files it touched are the
 * difference between snapshots of the work tree taken before and after (content, not timestamps: a
 * file rewritten with the same bytes was not touched; one changed again after an earlier change was).
 */
export async function runInSandbox(ctx: ToolContext, cmd: SandboxCommand): Promise<ToolCallResult> {
  const { sandbox, signal, confinement } = ctx;
  const { program, argv, cwd, timeoutMs } = cmd;
  // The files a command touched: a repository it made is left out here (the checkpoint refuses it).
  const snapshot = { force: sandbox.kind === 'copy', nested: 'skip' } as const;
  const before = await snapshotTree(directGit, sandbox.root, snapshot);
  const r = await runConfined(
    confinement,
    { program, args: argv, cwd, sandboxRoot: sandbox.root, network: ctx.network, env: ctx.env },
    { timeoutMs, signal, onOutput: ctx.onOutput },
  );
  let filesTouched: string[] = [];
  let note = '';
  try {
    filesTouched = await changedPaths(
      directGit,
      sandbox.root,
      before,
      await snapshotTree(directGit, sandbox.root, snapshot),
    );
  } catch (e) {
    note = `\n[could not determine the files the command changed: ${messageOf(e)}]`;
  }
  const shown =
    cmd.shown ?? [program, ...argv].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
  const output = modelOutputOf(r.kept) + note;
  const commandOutput = commandOutputOf(r);
  const touched =
    filesTouched.length > 0 ? `; ${filesTouched.length} file${filesTouched.length === 1 ? '' : 's'} changed` : '';
  const how = confinement.mode === 'bubblewrap' ? ('confined' as const) : ('none' as const);
  const fail = (summary: string): ToolCallResult => ({
    ok: false,
    summary,
    output,
    filesTouched,
    exitCode: null,
    confinement: how,
    commandOutput,
  });
  if (r.spawnError !== undefined) return fail(`cannot run ${program}: ${r.spawnError}`);
  if (r.aborted) return fail(`${shown}: cancelled${touched}`);
  if (r.timedOut) return fail(`${shown}: killed after the ${duration(timeoutMs)} time limit${touched}`);
  if (r.outputLimited)
    return fail(`${shown}: killed at the output limit (${mib(confinement.limits.maxOutputBytes)} of output)${touched}`);
  if (r.exitCode === null) return fail(`${shown}: killed by ${r.signal ?? 'a signal'}${touched}`);
  const limits = [
    r.processLimitHit ? `the process limit (${confinement.limits.maxProcesses} processes) was reached` : '',
    r.exitCode !== 0 && how === 'confined' && OUT_OF_MEMORY.test(r.output)
      ? `the memory limit (${mib(confinement.limits.memoryBytes)} of address space) was reached`
      : '',
  ].filter(Boolean);
  return {
    ok: r.exitCode === 0,
    summary: `${shown}: exit ${r.exitCode}${limits.length ? ` (${limits.join('; ')})` : ''}${touched}`,
    output,
    filesTouched,
    exitCode: r.exitCode,
    confinement: how,
    commandOutput,
  };
}

const mib = (bytes: number): string => `${Math.round(bytes / 1024 / 1024)} MiB`;
/** How programs say an allocation failed (RLIMIT_AS makes it fail; nothing reports it otherwise). */
const OUT_OF_MEMORY =
  /Cannot allocate memory|MemoryError|out of memory|std::bad_alloc|memory exhausted|Failed to (?:reserve|allocate)|allocation failed/i;

/**
 * The sandbox's git, for the git tools: run here (the tool runner has no confined helper), with
 * every repository-controlled program off (../sandbox/git.ts), submodules not entered.
 */
const SANDBOX_GIT = (root: string) => ({ confine: true, workTree: root }) as const;

export async function gitStatusTool({ sandbox }: ToolContext): Promise<ToolCallResult> {
  const out = await outOf(
    directGit,
    sandbox.root,
    ['status', '--porcelain=v1', '--untracked-files=all', '--ignore-submodules=all'],
    SANDBOX_GIT(sandbox.root),
  );
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
  const d =
    staged || paths.length > 0
      ? await diffTrees(
          directGit,
          sandbox.root,
          sandbox.baseCommit,
          staged
            ? await outOf(directGit, sandbox.root, ['write-tree'], SANDBOX_GIT(sandbox.root))
            : await snapshotTree(directGit, sandbox.root, { force: sandbox.kind === 'copy', nested: 'refuse' }),
          paths,
        )
      : await diffWorkTree(directGit, sandbox.root, sandbox.baseCommit, {
          force: sandbox.kind === 'copy',
          nested: 'refuse',
        });
  return ok(
    `${d.stats.files} file${d.stats.files === 1 ? '' : 's'} changed, +${d.stats.additions} −${d.stats.deletions}`,
    d.unified,
  );
}
