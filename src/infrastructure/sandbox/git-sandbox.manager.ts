import { AppError } from '../../domain/errors.js';
import { hostname } from 'node:os';
import { lstat, mkdir, readFile, realpath, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ApplyOutcome, RebaseOutcome, SandboxDiff, SandboxInfo, SandboxManager } from '../../application/index.js';
import type { ResourceDefinition } from '../../domain/registry/entities.js';
import { applyCopySandbox, createCopySandbox } from './copy-sandbox.js';
import { git, gitChain, gitOut, headFromFiles, KeyedLock, snapshotTree } from './git.js';
import { CheckpointHelpers, fastCheckpoint } from './fast-checkpoint.js';
import { withRepositoryLock } from './repository-lock.js';
import { diffTrees } from './sandbox-diff.js';
import { applyWorktreeSandbox } from './worktree-apply.js';
import { rebaseWorktreeSandbox, unresolvedFiles } from './worktree-rebase.js';

const PLAN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const BRANCH_PREFIX = 'cleveragents/plan-';
const SHA = /^[0-9a-f]{4,64}$/i;

export interface GitSandboxManagerOptions {
  /** Where sandboxes live (created if missing), e.g. `<dataDir>/sandboxes`. */
  root: string;
}

/**
 * Plan sandboxes on disk: `<root>/<planId>/<resource>` is a git worktree of the resource's
 * repository on branch `cleveragents/plan-<planId>` (git-checkout), or a copy with a private
 * repository (fs-directory). Each sandbox's {@link SandboxInfo} is kept beside it in
 * `<root>/<planId>/<resource>.sandbox.json`, so `create` is idempotent across restarts.
 *
 * Until `apply`, the user's repository gains only the worktree's metadata and the plan branch; its
 * work tree, index and HEAD are never written.
 */
export class GitSandboxManager implements SandboxManager {
  readonly #configured: string;
  #base: Promise<string> | undefined;
  readonly #sandboxLocks = new KeyedLock();
  readonly #repoLocks = new KeyedLock();
  readonly #helpers = new CheckpointHelpers();

  constructor(opts: GitSandboxManagerOptions) {
    this.#configured = path.resolve(opts.root);
  }

  async create(planId: string, resource: ResourceDefinition): Promise<SandboxInfo> {
    if (!PLAN_ID.test(planId)) throw new Error(`invalid plan id ${JSON.stringify(planId)}`);
    // Checked before our root is created, so a misplaced data directory leaves no trace in the user's.
    const source = await realpath(resource.path).catch(() => {
      throw new Error(`resource ${resource.name}: ${resource.path} does not exist`);
    });
    const intended = await realish(this.#configured);
    if (
      inside(source, intended) ||
      intended === source ||
      (resource.type === 'fs-directory' && inside(intended, source))
    ) {
      throw new Error(
        `the sandbox directory ${intended} and the resource ${source} overlap; choose a data directory outside it`,
      );
    }
    const base = await this.#root();
    const dir = path.join(base, planId, slug(resource.name));
    return this.#sandboxLocks.run(dir, async () => {
      const existing = await readInfo(dir);
      if (existing) {
        if (existing.resource !== resource.name || existing.kind !== kindOf(resource) || existing.source !== source) {
          throw new Error(
            `the sandbox ${dir} belongs to another resource (${existing.resource} at ${existing.source})`,
          );
        }
        if (await exists(path.join(dir, '.git'))) return existing;
        if (existing.kind === 'git-worktree') {
          // The worktree directory went away (removed by hand, or a crash before `worktree add`):
          // check the plan branch, with its checkpoints, out again.
          await this.#addWorktree(existing, false);
          return existing;
        }
        // A copy that went away has nothing left to resume from: make a fresh one.
        await rm(infoFile(dir), { force: true });
      }
      await rm(dir, { recursive: true, force: true });
      await mkdir(path.dirname(dir), { recursive: true });
      return resource.type === 'git-checkout'
        ? this.#createWorktree(planId, resource, source, dir)
        : this.#createCopy(resource, source, dir);
    });
  }

  async checkpoint(sandbox: SandboxInfo, label: string, changed?: readonly string[]): Promise<string> {
    const root = await this.#own(sandbox);
    if (changed !== undefined) {
      // Only the known paths, without a git process of its own (fast-checkpoint.ts); when the
      // sandbox is not as that assumes, or anything fails, git's commands below make the checkpoint.
      const fast = await fastCheckpoint({
        root,
        changed,
        label,
        force: sandbox.kind === 'copy',
        helpers: this.#helpers,
      }).catch(() => undefined);
      if (fast) return fast;
    }
    const o = { confine: true, identity: true };
    // A plan makes a checkpoint per write step: without maintenance.auto=false every one of them
    // also spawns `git maintenance run --auto`, which costs as much again as the commit. The
    // repository's own commands still run its maintenance. Both commands run from one process.
    await gitChain(
      root,
      [
        ['add', '-A', ...(sandbox.kind === 'copy' ? ['-f'] : []), '--', '.'],
        [
          '-c',
          'maintenance.auto=false',
          'commit',
          '-q',
          '--allow-empty',
          '--no-verify',
          '-m',
          `checkpoint: ${label.replace(/\0/g, '')}`,
        ],
      ],
      o,
    );
    // Git has just written the branch's loose ref: reading it spares a third git process per step.
    return headFromFiles(root) ?? gitOut(root, ['rev-parse', 'HEAD'], o);
  }

  async restore(sandbox: SandboxInfo, commit: string): Promise<void> {
    const root = await this.#own(sandbox);
    const o = { confine: true };
    if (!SHA.test(commit)) throw new Error(`not a commit id: ${JSON.stringify(commit)}`);
    const sha = await gitOut(root, ['rev-parse', '--verify', '-q', `${commit}^{commit}`], o).catch(() => {
      throw new Error(`no checkpoint ${commit} in the sandbox ${root}`);
    });
    const ancestor = await git(root, ['merge-base', '--is-ancestor', sandbox.baseCommit, sha], { ...o, okCodes: [1] });
    if (ancestor.code !== 0)
      throw new Error(`${commit} is not a checkpoint of the sandbox ${root} (it does not descend from its base)`);
    await gitChain(
      root,
      [
        ['reset', '-q', '--hard', sha],
        ['clean', '-q', '-ffdx'],
      ],
      o,
    );
  }

  async diff(sandbox: SandboxInfo): Promise<SandboxDiff> {
    const root = await this.#own(sandbox);
    const tree = await snapshotTree(root, sandbox.kind === 'copy');
    return diffTrees(root, sandbox.baseCommit, tree);
  }

  /**
   * git-worktree: pending work in the sandbox is first committed as a checkpoint "before apply"
   * (so the squash holds exactly what `diff` showed). Applies to one repository are serialised.
   */
  async apply(sandbox: SandboxInfo, message: string): Promise<ApplyOutcome> {
    const root = await this.#own(sandbox);
    if (sandbox.kind === 'copy') return this.#repoLocks.run(sandbox.source, () => applyCopySandbox(sandbox));
    return this.#repoLock(sandbox.source, async () => {
      const pending = await gitOut(root, ['status', '--porcelain', '--untracked-files=all'], { confine: true });
      if (pending !== '') await this.checkpoint(sandbox, 'before apply');
      return applyWorktreeSandbox(sandbox, message);
    });
  }

  /**
   * Pending work is first committed as a checkpoint "before rebase"; the new base is written to the
   * sandbox's info (so `create` hands out the rebased sandbox). Serialised with applies to the repository.
   */
  async rebase(sandbox: SandboxInfo): Promise<RebaseOutcome> {
    const root = await this.#own(sandbox);
    if (sandbox.kind !== 'git-worktree')
      throw new Error(`the sandbox of ${sandbox.resource} is a copy, not a git checkout: nothing to rebase`);
    return this.#repoLock(sandbox.source, async () => {
      if (!(await exists(path.join(root, '.git'))))
        throw new Error(`the sandbox ${root} is gone: nothing to rebase (see agents plan status)`);
      const outcome = await rebaseWorktreeSandbox(sandbox, root, async () => {
        const pending = await gitOut(root, ['status', '--porcelain', '--untracked-files=all'], { confine: true });
        if (pending !== '') await this.checkpoint(sandbox, 'before rebase');
      });
      if (outcome.sandbox.baseCommit !== sandbox.baseCommit) await writeInfo(outcome.sandbox);
      return outcome;
    });
  }

  async unresolved(sandbox: SandboxInfo, files: readonly string[]): Promise<string[]> {
    return unresolvedFiles(await this.#own(sandbox), files);
  }

  async remove(sandbox: SandboxInfo): Promise<void> {
    const root = await this.#own(sandbox, false);
    this.#helpers.close(root);
    if (sandbox.kind === 'git-worktree') {
      const branch = sandbox.branch;
      if (!branch?.startsWith(BRANCH_PREFIX))
        throw new Error(`refusing to delete branch ${String(branch)}: not a plan branch`);
      const repo = await stat(sandbox.source).then(
        (s) => s.isDirectory(),
        () => false,
      );
      if (repo) {
        // Serialised with creates (see #addWorktree).
        await this.#repoLock(sandbox.source, async () => {
          await git(sandbox.source, ['worktree', 'remove', '--force', '--force', root], { confine: true }).catch(
            () => undefined,
          );
          await rm(root, { recursive: true, force: true });
          await git(sandbox.source, ['worktree', 'prune'], { confine: true });
          const has = await git(sandbox.source, ['rev-parse', '--verify', '-q', `refs/heads/${branch}`], {
            confine: true,
            okCodes: [1],
          });
          if (has.code === 0) await git(sandbox.source, ['branch', '-D', branch], { confine: true });
        });
      }
    }
    await rm(root, { recursive: true, force: true });
    await rm(infoFile(root), { force: true });
    await rmdir(path.dirname(root)).catch(() => undefined);
  }

  async #createWorktree(
    planId: string,
    resource: Extract<ResourceDefinition, { type: 'git-checkout' }>,
    source: string,
    dir: string,
  ): Promise<SandboxInfo> {
    const top = await gitOut(source, ['rev-parse', '--show-toplevel']).catch(() => {
      throw new Error(`resource ${resource.name}: ${source} is not a git work tree`);
    });
    if (top !== source)
      throw new Error(
        `resource ${resource.name}: ${source} is inside the git work tree ${top}; register the top of the work tree`,
      );
    const ro = { confine: true, env: { GIT_OPTIONAL_LOCKS: '0' } };
    const targetBranch =
      resource.branch ??
      (await git(source, ['symbolic-ref', '-q', '--short', 'HEAD'], { ...ro, okCodes: [1] })).stdout.trim();
    if (!targetBranch)
      throw new Error(`resource ${resource.name}: ${source} has a detached HEAD; set the resource's branch`);
    const baseCommit = await gitOut(
      source,
      ['rev-parse', '--verify', '-q', `refs/heads/${targetBranch}^{commit}`],
      ro,
    ).catch(() => {
      throw new Error(`resource ${resource.name}: branch ${targetBranch} has no commits in ${source}`);
    });
    const info: SandboxInfo = {
      resource: resource.name,
      kind: 'git-worktree',
      root: dir,
      source,
      branch: `${BRANCH_PREFIX}${planId}`,
      baseCommit,
      targetBranch,
    };
    // The info goes first: after a crash between the two steps, create finds it and adds the worktree.
    await writeInfo(info);
    try {
      await this.#addWorktree(info, true);
    } catch (e) {
      await rm(infoFile(dir), { force: true });
      throw e;
    }
    return info;
  }

  /**
   * One repository's worktree metadata has one writer at a time (with applies and rebases): a
   * `worktree prune` deletes the admin directory another `worktree add` has made and not yet
   * filled in, and that add fails ("could not open .git/worktrees/…/gitdir").
   */
  #addWorktree(info: SandboxInfo, fresh: boolean): Promise<void> {
    return this.#repoLock(info.source, () => this.#addWorktreeNow(info, fresh));
  }

  /**
   * The repository's lock, in this process and across processes (repository-lock.ts): each local
   * CLI command runs its own agent, so two commands on one repository are two processes.
   */
  #repoLock<T>(source: string, work: () => Promise<T>): Promise<T> {
    return this.#repoLocks.run(source, () => withRepositoryLock(source, work));
  }

  async #addWorktreeNow(info: SandboxInfo, fresh: boolean): Promise<void> {
    const o = { confine: true };
    const branch = info.branch ?? '';
    await git(info.source, ['worktree', 'prune'], o);
    const has =
      (await git(info.source, ['rev-parse', '--verify', '-q', `refs/heads/${branch}`], { ...o, okCodes: [1] })).code ===
      0;
    if (has && fresh)
      throw new Error(`branch ${branch} already exists in ${info.source}; delete it or remove the plan's sandbox`);
    await rm(info.root, { recursive: true, force: true });
    await git(
      info.source,
      ['worktree', 'add', '-q', ...(has ? [info.root, branch] : ['-b', branch, info.root, info.baseCommit])],
      o,
    );
  }

  async #createCopy(
    resource: Extract<ResourceDefinition, { type: 'fs-directory' }>,
    source: string,
    dir: string,
  ): Promise<SandboxInfo> {
    if (!(await stat(source)).isDirectory()) throw new Error(`resource ${resource.name}: ${source} is not a directory`);
    try {
      const baseCommit = await createCopySandbox(source, dir, `copy of ${source}`);
      const info: SandboxInfo = { resource: resource.name, kind: 'copy', root: dir, source, baseCommit };
      await writeInfo(info);
      return info;
    } catch (e) {
      await rm(dir, { recursive: true, force: true });
      throw e;
    }
  }

  /** The sandboxes' root, created and resolved once (git reports real paths; so do we). */
  #root(): Promise<string> {
    this.#base ??= mkdir(this.#configured, { recursive: true, mode: 0o700 }).then(() => realpath(this.#configured));
    return this.#base;
  }

  /**
   * The sandbox's root, after checking it is one of ours (`<root>/<planId>/<resource>`): nothing
   * outside our root is ever reset, cleaned or deleted, whatever SandboxInfo we are handed.
   */
  async #own(sandbox: SandboxInfo, mustExist = true): Promise<string> {
    const root = path.resolve(sandbox.root);
    const base = await this.#root();
    const ok = [base, this.#configured].some((b) => {
      const rel = path.relative(b, root).split(path.sep);
      return inside(b, root) && rel.length === 2 && rel.every((s) => s !== '' && s !== '.' && s !== '..');
    });
    // Several server instances share one database: a plan made on one is worked on by any, so
    // every instance must see the same sandbox directory at the same path.
    if (!ok)
      throw new Error(
        `${root} is not a sandbox of this manager (${base}); instances on one database must all use the same data directory path`,
      );
    if (mustExist && !(await exists(root))) throw unreachable(root, this.#configured);
    return root;
  }
}

function unreachable(root: string, base: string): AppError {
  return new AppError(
    'UNAVAILABLE',
    `The plan's sandbox ${root} is not reachable from this instance (${hostname()}), whose sandbox directory is ${base}`,
    {
      details: { sandbox: root, sandboxDirectory: base, host: hostname() },
      hint: 'every instance on one database must mount the same data directory (--data-dir) at the same path; see the README, "Several instances"',
    },
  );
}

const kindOf = (r: ResourceDefinition): SandboxInfo['kind'] => (r.type === 'git-checkout' ? 'git-worktree' : 'copy');

/** `ns/name` → `ns.name`: segments never contain a dot, so distinct names give distinct directories. */
const slug = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, '.');

/** True when `child` is strictly inside `parent`. */
const inside = (parent: string, child: string): boolean => {
  const rel = path.relative(parent, child);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
};

const exists = (p: string): Promise<boolean> =>
  lstat(p).then(
    () => true,
    () => false,
  );

/** The real path of `p`, which may not exist yet: its nearest existing ancestor resolved, the rest appended. */
async function realish(p: string): Promise<string> {
  const real = await realpath(p).catch(() => undefined);
  if (real !== undefined) return real;
  const parent = path.dirname(p);
  return parent === p ? p : path.join(await realish(parent), path.basename(p));
}

const infoFile = (dir: string): string => `${dir}.sandbox.json`;

async function readInfo(dir: string): Promise<SandboxInfo | undefined> {
  const text = await readFile(infoFile(dir), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : (JSON.parse(text) as SandboxInfo);
}

async function writeInfo(info: SandboxInfo): Promise<void> {
  const file = infoFile(info.root);
  await writeFile(`${file}.tmp`, JSON.stringify(info, null, 2));
  await rename(`${file}.tmp`, file);
}
