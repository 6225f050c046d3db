/**
 * builtin/bash: a command line run by a shell, in the same confinement as every other command
 * (bubblewrap, the request's network policy, the allowlisted environment, the process-group kill).
 * It is a shell, so pipes, `&&` and `cd` work — and the sandbox is the only barrier: nothing here
 * inspects or filters the command.
 */
import type { ToolCallResult } from '../../application/index.ts';
import { callTimeout, commandCwd, runInSandbox } from './command-tools.ts';
import { str, ToolFailure, type ToolContext } from './tool-support.ts';

/** The longest command shown in a summary (the whole of it is in the call's arguments). */
const SHOWN_CHARS = 80;

export async function bashTool(ctx: ToolContext): Promise<ToolCallResult> {
  const command = str(ctx.args, 'command');
  if (command.trim() === '') throw new ToolFailure('argument command must not be empty');
  const cwd = await commandCwd(ctx);
  const shell = await shellFor(ctx, cwd);
  return runInSandbox(ctx, {
    program: shell,
    argv: ['-c', command],
    cwd,
    timeoutMs: callTimeout(ctx),
    shown: shownCommand(command),
  });
}

/** bash where the command can see it (inside the confinement's view), else sh. */
export async function shellFor(ctx: ToolContext, cwd: string): Promise<string> {
  if (ctx.confinement.mode === 'unavailable') return 'bash'; // refused with the reason when it runs
  const inv = { program: 'bash', cwd, sandboxRoot: ctx.sandbox.root, env: ctx.env };
  return (await ctx.confinement.locate(inv)) ? 'bash' : 'sh';
}

/** `$ npm test && npm run lint`, on one line and cut at SHOWN_CHARS. */
export function shownCommand(command: string): string {
  const line = command.trim().replace(/\s*\n\s*/g, ' ⏎ ');
  return `$ ${line.length > SHOWN_CHARS ? `${line.slice(0, SHOWN_CHARS)}…` : line}`;
}
