/**
 * What a call would do, shown before a person approves it: a file tool's unified diff against the
 * file as it is now, a command's exact command line and working directory. Nothing is written or
 * run; a call that would fail says why in `problem`.
 */
import type { ToolCallRequest, ToolPreview } from '../../application/index.ts';
import { splitCommandLine } from '../../domain/plan/command-line.ts';
import { shellQuote } from './command-output-forms.ts';
import { pathArgument } from './command-tools.ts';
import { planEdit, planWrite, type PlannedChange } from './edit-tools.ts';
import { planEditFile } from './file-tools.ts';
import { resolveInSandbox } from './path-guard.ts';
import { str, strings } from './tool-support.ts';
import { unifiedDiff } from './unified-diff.ts';
import { messageOf } from '../../domain/errors.ts';

type PreviewRequest = Omit<ToolCallRequest, 'timeoutMs' | 'onOutput'>;
type Previewer = (req: PreviewRequest) => Promise<ToolPreview>;

/** One row per built-in tool that has something to show; the rest preview as `{}`. */
const PREVIEWS: Readonly<Record<string, Previewer>> = {
  'builtin/write': (req) => planWrite(req.sandbox.root, req.args).then(diffOf),
  'builtin/write-file': (req) => planWrite(req.sandbox.root, req.args).then(diffOf),
  'builtin/edit': (req) => planEdit(req.sandbox.root, req.args).then(diffOf),
  'builtin/edit-file': (req) => planEditFile(req.sandbox.root, req.args).then(diffOf),
  'builtin/bash': async (req) => ({ command: str(req.args, 'command'), cwd: await cwdOf(req) }),
  'builtin/run-command': async (req) => ({ command: shellQuote(runCommandWords(req.args)), cwd: await cwdOf(req) }),
};

/** Never throws: a call that would fail gives `problem`. */
export async function previewCall(req: PreviewRequest): Promise<ToolPreview> {
  try {
    const { tool } = req;
    if (tool.source === 'command' && tool.command) {
      const paths: string[] = [];
      for (const p of strings(req.args, 'paths') ?? [])
        paths.push(await pathArgument(req.sandbox.root, p, tool.writes));
      const words = [
        tool.command.program,
        ...(tool.command.args ?? []),
        ...(strings(req.args, 'args') ?? []),
        ...paths,
      ];
      return { command: shellQuote(words), cwd: '.' };
    }
    const preview = tool.source === 'builtin' && Object.hasOwn(PREVIEWS, tool.name) ? PREVIEWS[tool.name] : undefined;
    return preview ? await preview(req) : {};
  } catch (e) {
    return { problem: messageOf(e) };
  }
}

function diffOf(c: PlannedChange): ToolPreview {
  const { target, before, after, beforeNote } = c;
  if (beforeNote !== undefined)
    return {
      diff: `--- a/${target.rel}\n+++ b/${target.rel}\n[replaces ${beforeNote} with ${Buffer.byteLength(after)} bytes of text]\n`,
    };
  return { diff: unifiedDiff(target.rel, before, after).text };
}

/** run-command's words: `program` and `args`, or its `command` line split as the application splits it. */
function runCommandWords(args: Record<string, unknown>): string[] {
  const line = str(args, 'command', true);
  if (line !== undefined) return splitCommandLine(line);
  return [str(args, 'program'), ...(strings(args, 'args') ?? [])];
}

/** The call's working directory relative to the root (`.`: the root), refused outside it. */
async function cwdOf(req: PreviewRequest): Promise<string> {
  return (await resolveInSandbox(req.sandbox.root, str(req.args, 'cwd', true) ?? '.')).rel || '.';
}
