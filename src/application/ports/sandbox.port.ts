import type { ResourceDefinition } from '../../domain/registry/resource.definition.ts';
import type { ToolDefinition } from '../../domain/registry/tool.definition.ts';

/** Where a plan works on one resource: a git worktree on its own branch, or a tracked copy. */
export interface SandboxInfo {
  /** The resource's registry name. */
  resource: string;
  kind: 'git-worktree' | 'copy';
  /** The sandbox directory (absolute). */
  root: string;
  /** The user's directory the sandbox came from (the resource's path). */
  source: string;
  /** git-worktree: the plan's branch (`cleveragents/plan-<id>`). */
  branch?: string | undefined;
  /** The commit the sandbox started from (git-worktree: in the user's repo; copy: in the sandbox's own repo). */
  baseCommit: string;
  /** git-worktree: the branch of the user's repository the plan started from and will merge into. */
  targetBranch?: string | undefined;
  /**
   * A git-remote's sandbox: `source` is the server's clone, and apply pushes to the remote (`push`
   * as the resource says when applied) instead of merging into a work tree.
   */
  remote?: true | undefined;
}

export interface FileChange {
  path: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed';
  additions: number;
  deletions: number;
  /** Size in bytes after the change (0 when deleted). */
  size: number;
  binary: boolean;
}

export interface SandboxDiff {
  /** Unified diff (git format, paths relative to the sandbox root). */
  unified: string;
  files: FileChange[];
  stats: { files: number; additions: number; deletions: number };
}

export type ApplyOutcome =
  | {
      ok: true;
      commit?: string | undefined;
      files: string[];
      /** A git-remote's: the remote's branch the commit was pushed to (the user's next stop: review or merge it there). */
      pushedTo?: string | undefined;
    }
  /** Nothing was changed in the user's directory. */
  | { ok: false; reason: 'conflict' | 'dirty'; files: string[]; message: string };

/**
 * A sandbox brought onto the current head of its target branch. `sandbox` is the sandbox as it now
 * is (its `baseCommit` is that head), in both outcomes: on a conflict the sandbox holds the plan's
 * changes on the new head with conflict markers in `files`, committed, and no rebase in progress.
 */
export type RebaseOutcome =
  /** `moved: false`: the target branch had not moved; `files`: what the plan changes on the new base. */
  | { ok: true; moved: boolean; sandbox: SandboxInfo; files: string[] }
  | { ok: false; reason: 'conflict'; sandbox: SandboxInfo; files: string[]; message: string };

/**
 * Creates and manages plan sandboxes. Nothing here writes to the user's working tree except
 * `apply`, and `apply` writes nothing when it refuses.
 */
export interface SandboxManager {
  /** Creates the sandbox of a plan for a resource (idempotent: returns the existing one). */
  create(planId: string, resource: ResourceDefinition): Promise<SandboxInfo>;
  /**
   * Commits everything in the sandbox as a checkpoint; returns the commit id. `changed`, when the
   * caller knows it exactly, lists every path (relative to the root) that may differ from the last
   * checkpoint or restore: the manager may then look at those paths only. Without it, the whole
   * sandbox is scanned.
   */
  checkpoint(sandbox: SandboxInfo, label: string, changed?: readonly string[]): Promise<string>;
  /** Resets the sandbox's files and branch to a checkpoint (untracked files removed too). */
  restore(sandbox: SandboxInfo, commit: string): Promise<void>;
  /** The sandbox's changes against its base (committed and uncommitted). */
  diff(sandbox: SandboxInfo): Promise<SandboxDiff>;
  /**
   * Brings the sandbox's changes into the user's directory: git-worktree → a squash merge into the
   * target branch with one commit `message` (refused when the target branch is not checked out,
   * when files the plan changed are dirty there, or on a merge conflict — checked before anything
   * is written); copy → the changed files are written back (refused when the user changed any of
   * them since the sandbox was made); a git-remote's (`resource`: its definition now) → the plan's
   * changes as one commit on its base, pushed to the plan's branch, or to the target branch as a
   * fast-forward (refused, nothing pushed, when the remote's branch moved since the plan's base).
   */
  apply(sandbox: SandboxInfo, message: string, resource?: ResourceDefinition): Promise<ApplyOutcome>;
  /**
   * Removes the sandbox: a worktree, its branch and git's record of the worktree (so neither
   * `git worktree list` nor `git branch` shows it), or the copy. Removing one that is gone is no error.
   */
  remove(sandbox: SandboxInfo): Promise<void>;
  /**
   * git-worktree: rebases the plan's changes (pending work first committed as a checkpoint) onto the
   * current head of the target branch in the user's repository; nothing in the user's work tree,
   * index or branches other than the plan's changes. A copy sandbox is refused (not a git checkout).
   * A git-remote's (`resource`: its definition now) is fetched first: onto the remote's current tip.
   */
  rebase(sandbox: SandboxInfo, resource?: ResourceDefinition): Promise<RebaseOutcome>;
  /** Of `files` (paths relative to the sandbox root), those that still hold conflict markers. */
  unresolved(sandbox: SandboxInfo, files: readonly string[]): Promise<string[]>;
  /**
   * Resolves when this instance can work on the sandbox; otherwise throws UNAVAILABLE with a hint
   * that says where it is (another instance made it under a sandbox directory not mounted here, or
   * it is gone). Reads only: a plan operation calls it before it changes anything. With `orGone`,
   * a sandbox of this instance that is gone passes (removing it is then nothing to do).
   */
  assertReachable(sandbox: SandboxInfo, opts?: { orGone?: boolean }): Promise<void>;
}

export interface ToolCallRequest {
  tool: ToolDefinition;
  args: Record<string, unknown>;
  sandbox: SandboxInfo;
  signal: AbortSignal;
  /** Time limit for commands (ms). */
  timeoutMs: number;
  /** Whether commands may reach the network (default none). */
  network?: 'none' | 'allow' | undefined;
  /** Variables the action declares for its commands (they never see the server's environment). */
  env?: Readonly<Record<string, string>> | undefined;
  /**
   * For commands: called with each piece of output as the command produces it (stdout and stderr,
   * in the order they arrived), so a client can watch it. Absent: the output is only returned.
   */
  onOutput?: ((chunk: CommandOutputChunk) => void) | undefined;
}

/** A piece of a command's output, as it came. */
export interface CommandOutputChunk {
  stream: 'stdout' | 'stderr';
  text: string;
}

/** The most of a command's output kept in its record (task or plan): the rest is cut from the middle. */
export const KEPT_OUTPUT_BYTES = 1024 * 1024;

/** A command's whole output as kept in its record (stdout and stderr interleaved as they came). */
export interface CommandOutput {
  /** Up to KEPT_OUTPUT_BYTES: when longer, its head and tail with a line saying what was cut. */
  text: string;
  /** How many bytes the command wrote in all. */
  bytes: number;
  truncated: boolean;
}

/** What a call would do, shown before a person approves it. */
export interface ToolPreview {
  /** A file tool: the unified diff of the files it would change, against their current content. */
  diff?: string | undefined;
  /** A command tool: the exact command line it would run, and where (relative to the root, `.`: the root). */
  command?: string | undefined;
  cwd?: string | undefined;
  /** Why no preview could be made (the call would fail: no match, a refused path…). */
  problem?: string | undefined;
}

export interface ToolCallResult {
  ok: boolean;
  /** One line for logs and progress. */
  summary: string;
  /** The tool's output (file content, command output, diff…), truncated to a sane size. */
  output: string;
  /** Paths (relative to the sandbox root) the call wrote, edited or deleted. */
  filesTouched: string[];
  /** For commands: the exit code; null when killed. */
  exitCode?: number | null;
  /** For commands: whether it ran OS-confined, or unconfined because the server says `confinement: none`. */
  confinement?: 'confined' | 'none' | undefined;
  /** For commands: the whole output to keep (`output` is what a model is given: its head and tail). */
  commandOutput?: CommandOutput | undefined;
}

/**
 * Runs tools inside a sandbox. A path that escapes the sandbox root — `..`, an absolute path, or a
 * symlink pointing outside — is refused (the call fails with ok:false, nothing is touched).
 */
export interface ToolRunner {
  run(req: ToolCallRequest): Promise<ToolCallResult>;
  /**
   * How its commands are confined: `confined`, `none` (the user turned confinement off), or
   * `unavailable` (required but impossible here: every command is refused). Waits for the
   * start-up probe when it is still under way.
   */
  confinement?(): Promise<'confined' | 'none' | 'unavailable'>;
  /**
   * What a call would do, without doing it: a file tool's diff, a command's command line. Never
   * throws; absent for a tool it cannot preview (an empty object).
   */
  preview?(req: Omit<ToolCallRequest, 'timeoutMs' | 'onOutput'>): Promise<ToolPreview>;
}
