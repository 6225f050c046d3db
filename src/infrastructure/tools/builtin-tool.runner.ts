import type { ToolCallRequest, ToolCallResult, ToolPreview, ToolRunner } from '../../application/index.ts';
import type { ConfinementSource } from './confinement.ts';
import { commandTool, gitDiffTool, gitStatusTool, runCommandTool } from './command-tools.ts';
import { editTool, writeTool } from './edit-tools.ts';
import { editFileTool, listFilesTool, readFileTool, searchFilesTool, writeFileTool } from './file-tools.ts';
import { PathRefusedError } from './path-guard.ts';
import { readTool } from './read-tool.ts';
import { replaceInFilesTool } from './replace-tool.ts';
import { globTool, grepTool, listTool } from './search-tools.ts';
import { bashTool } from './shell-tool.ts';
import { previewCall } from './tool-preview.ts';
import { failed, ToolFailure, type ToolContext } from './tool-support.ts';
import { messageOf } from '../../domain/errors.ts';

type BuiltinTool = (ctx: ToolContext) => Promise<ToolCallResult>;

/** One row per built-in tool (names as in `BUILTIN_TOOLS`); an unknown name fails by absence. */
const BUILTINS: Readonly<Record<string, BuiltinTool>> = {
  'builtin/read': readTool,
  'builtin/grep': grepTool,
  'builtin/glob': globTool,
  'builtin/list': listTool,
  'builtin/edit': editTool,
  'builtin/write': writeTool,
  'builtin/bash': bashTool,
  'builtin/read-file': readFileTool,
  'builtin/write-file': writeFileTool,
  'builtin/edit-file': editFileTool,
  'builtin/list-files': listFilesTool,
  'builtin/search-files': searchFilesTool,
  'builtin/replace-in-files': replaceInFilesTool,
  'builtin/run-command': runCommandTool,
  'builtin/git-status': gitStatusTool,
  'builtin/git-diff': gitDiffTool,
};

/**
 * Runs `source: builtin` tools and registry `source: command` tools inside a sandbox. Never throws
 * for a failed call: a refused path, a bad argument, a missing file, a non-zero exit or an I/O
 * error all come back as `ok: false` with a one-line summary (and nothing touched when refused).
 */
export class BuiltinToolRunner implements ToolRunner {
  /** `confinement` decides how every command runs (the composition root probes it once). */
  private readonly opts: { confinement: ConfinementSource };

  constructor(opts: { confinement: ConfinementSource }) {
    this.opts = opts;
  }

  async confinement(): Promise<'confined' | 'none' | 'unavailable'> {
    const m = (await this.opts.confinement).mode;
    return m === 'bubblewrap' ? 'confined' : m;
  }

  /** A file tool's diff or a command's command line, computed without writing or running anything. */
  preview(req: Omit<ToolCallRequest, 'timeoutMs' | 'onOutput'>): Promise<ToolPreview> {
    return previewCall(req);
  }

  async run(req: ToolCallRequest): Promise<ToolCallResult> {
    const confinement = await this.opts.confinement;
    const ctx: ToolContext = {
      sandbox: req.sandbox,
      args: req.args ?? {},
      signal: req.signal,
      timeoutMs: req.timeoutMs,
      confinement,
      network: req.network ?? 'none',
      env: req.env,
      onOutput: req.onOutput,
    };
    try {
      if (req.signal.aborted) return failed(`${req.tool.name}: cancelled before it started`);
      if (req.tool.source === 'command') return await commandTool(ctx, req.tool);
      const impl =
        req.tool.source === 'builtin' && Object.hasOwn(BUILTINS, req.tool.name) ? BUILTINS[req.tool.name] : undefined;
      if (!impl) return failed(`${req.tool.name}: not a tool this runner knows (source ${req.tool.source})`);
      return await impl(ctx);
    } catch (e) {
      if (e instanceof PathRefusedError || e instanceof ToolFailure)
        return failed(e.message, e instanceof ToolFailure ? e.output : '');
      return failed(`${req.tool.name} failed: ${messageOf(e)}`);
    }
  }
}
