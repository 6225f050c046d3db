/**
 * What a plan's steps changed in its sandbox since the last checkpoint, for the checkpoint that
 * follows (SandboxManager.checkpoint's `changed`): a checkpoint of known paths needs no scan of
 * the whole sandbox.
 */
import type { ToolDefinition } from '../../domain/registry/tool.definition.ts';

/** Built-in tools whose changes to the sandbox are exactly the files they report (none for readers). */
const EXACT_TOOLS = new Set([
  'builtin/read-file',
  'builtin/list-files',
  'builtin/search-files',
  'builtin/git-status',
  'builtin/git-diff',
  'builtin/write-file',
  'builtin/edit-file',
  'builtin/replace-in-files',
]);

/**
 * Which paths the steps since the last checkpoint changed, while that is known exactly: from a
 * checkpoint on, as long as only built-in file tools ran, each succeeded, and no hook ran (a
 * hook's command may change anything). Otherwise unknown until the next checkpoint, which then
 * scans the whole sandbox. The final `before-apply` checkpoint always does.
 */
export class ChangeTracker {
  #paths: Set<string> | undefined;
  #hooksRan = 0;

  constructor(atCheckpoint: boolean) {
    this.#paths = atCheckpoint ? new Set() : undefined;
  }

  /** A tool call ran; `hooksRan` is how many hooks had run by then (ToolCallHooks.ran). */
  ran(tool: ToolDefinition, result: { ok: boolean; filesTouched: readonly string[] }, hooksRan: number): void {
    this.hooks(hooksRan);
    const exact = tool.source === 'builtin' && EXACT_TOOLS.has(tool.name) && (result.ok || !tool.writes);
    if (!exact) this.#paths = undefined;
    for (const p of result.filesTouched) this.#paths?.add(p);
  }

  /** The hooks run so far: any new one makes the changes unknown. */
  hooks(ran: number): void {
    if (ran !== this.#hooksRan) this.#paths = undefined;
    this.#hooksRan = ran;
  }

  /** The paths changed since the last checkpoint; undefined when that is not known exactly. */
  since(): string[] | undefined {
    return this.#paths && [...this.#paths];
  }

  /** A checkpoint was made: from here on, nothing has changed. */
  checkpointed(): void {
    this.#paths = new Set();
  }
}
