import { mkdir, realpath, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ApplyOutcome, RebaseOutcome, SandboxDiff, SandboxInfo, SandboxManager } from '../../application/index.ts';
import type { GitRemoteResource, ResourceDefinition } from '../../domain/registry/resource.definition.ts';
import type { GitRemotes } from './git-remote.ts';
import { pushRemoteSandbox, remoteOf } from './remote-apply.ts';
import type { ConfinementSource } from '../tools/confinement.ts';
import { ApplyJournals } from './apply-journal.ts';
import { recoverEveryRepository, recoverJournals, type RecoveredApply } from './apply-recovery.ts';
import { ConfinedGit } from './confined-git.ts';
import { applyCopySandbox } from './copy-apply.ts';
import { createCopyInfo } from './copy-sandbox.ts';
import { configGuard } from './git-config-guard.ts';
import { NestedRepositoryError, hasPendingWork, stageAndCommit, submodulePaths } from './git-stage.ts';
import { GitError, KeyedLock, directGit, outOf, worktreeFiles } from './git.ts';
import type { GitRunner } from './git.ts';
import { withRepositoryLock } from './repository-lock.ts';
import { diffWorkTree } from './sandbox-diff.ts';
import {
  exists,
  existsSync,
  inside,
  infoFile,
  ioDir,
  kindOf,
  ownedRoot,
  knownPathsUsable,
  readInfo,
  realish,
  slug,
  writeInfo,
} from './sandbox-files.ts';
import { applyWorktreeSandbox } from './worktree-apply.ts';
import { rebaseWorktreeSandbox, unresolvedFiles } from './worktree-rebase.ts';
import { addWorktree, createWorktreeInfo, removeWorktree } from './worktree-create.ts';

const PLAN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const BRANCH_PREFIX = 'cleveragents/plan-';
const SHA = /^[0-9a-f]{4,64}$/i;

export interface GitSandboxManagerOptions {
  /** Where sandboxes live (created if missing), e.g. `<dataDir>/sandboxes`. */
  root: string;
  /**
   * How the sandbox's own git runs (checkpoints, restores, diffs, rebases): inside this
   * confinement when its mode is `bubblewrap`, like the commands that could have planted something
   * there; here, hardened, otherwise (and without one). Applies and worktree creation act on the
   * user's repository and run here, hardened.
   */
  confinement?: ConfinementSource | undefined;
  /** git-remote resources: their clones, fetches and pushes (without it, such a resource is refused). */
  remotes?: GitRemotes | undefined;
}

export type { RecoveredApply };

/**
 * Plan sandboxes on disk: `<root>/<planId>/<resource>` is a git worktree of the resource's
 * repository on branch `cleveragents/plan-<planId>` (git-checkout), or a copy with a private
 * repository (fs-directory). Each sandbox's {@link SandboxInfo} is kept beside it in
 * `<root>/<planId>/<resource>.sandbox.json`, so `create` is idempotent across restarts.
 *
 * Until `apply`, the user's repository gains only the worktree's metadata and the plan branch; its
 * work tree, index and HEAD are never written. An apply is atomic (worktree-apply.ts,
 * copy-apply.ts): one a crash interrupted is completed or rolled back by {@link recoverApplies}
 * at start-up, and before any later operation on its repository.
 */
export class GitSandboxManager implements SandboxManager {
  readonly #configured: string;
  readonly #confinement: ConfinementSource | undefined;
  readonly #remotes: GitRemotes | undefined;
  #base: Promise<string> | undefined;
  readonly #sandboxLocks = new KeyedLock();
  readonly #repoLocks = new KeyedLock();
  readonly #runners = new Map<string, ConfinedGit>();
  /** Each sandbox's submodule paths, per base commit (a plan cannot add one: see checkpoint). */
  readonly #gitlinks = new Map<string, { base: string; paths: string[] }>();

  constructor(opts: GitSandboxManagerOptions) {
    this.#configured = path.resolve(opts.root);
    this.#confinement = opts.confinement;
    this.#remotes = opts.remotes;
  }

  async create(planId: string, resource: ResourceDefinition): Promise<SandboxInfo> {
    if (!PLAN_ID.test(planId)) throw new Error(`invalid plan id ${JSON.stringify(planId)}`);
    if (resource.type === 'git-remote') return this.#createRemote(planId, resource);
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
        if (existing.kind === 'git-worktree') return this.#resumeWorktree(existing);
        if (await exists(path.join(dir, '.git'))) return existing;
        // A copy that went away has nothing left to resume from: make a fresh one.
        await rm(infoFile(dir), { force: true });
      }
      await rm(dir, { recursive: true, force: true });
      await mkdir(path.dirname(dir), { recursive: true });
      if (resource.type === 'fs-directory') return createCopyInfo(resource, source, dir);
      return this.#startWorktree(await createWorktreeInfo(resource, source, dir, `${BRANCH_PREFIX}${planId}`));
    });
  }

  /**
   * A git-remote's sandbox: the clone fetched now (the plan starts at the remote's current tip),
   * then a worktree of it on the plan's branch. A sandbox already made is handed out as it is.
   */
  async #createRemote(planId: string, resource: GitRemoteResource): Promise<SandboxInfo> {
    const dir = path.join(await this.#root(), planId, slug(resource.name));
    return this.#sandboxLocks.run(dir, async () => {
      const existing = await readInfo(dir);
      if (existing?.remote && existing.resource === resource.name) return this.#resumeWorktree(existing);
      const synced = await this.#remote().sync(resource);
      await rm(dir, { recursive: true, force: true });
      await mkdir(path.dirname(dir), { recursive: true });
      return this.#startWorktree({
        resource: resource.name,
        kind: 'git-worktree',
        root: dir,
        source: synced.repository,
        branch: `${BRANCH_PREFIX}${planId}`,
        baseCommit: synced.tip,
        targetBranch: synced.targetBranch,
        remote: true,
      });
    });
  }

  /** A new worktree sandbox: its info goes first, so that after a crash between the two steps create finds it and adds the worktree. */
  async #startWorktree(info: SandboxInfo): Promise<SandboxInfo> {
    await writeInfo(info);
    try {
      await this.#repoLock(info.source, () => addWorktree(info, true));
    } catch (e) {
      await rm(infoFile(info.root), { force: true });
      throw e;
    }
    return info;
  }

  /** A worktree sandbox made before; its directory gone (removed by hand, a crash before `worktree add`): the plan branch, with its checkpoints, checked out again. */
  async #resumeWorktree(info: SandboxInfo): Promise<SandboxInfo> {
    if (!(await exists(path.join(info.root, '.git'))))
      await this.#repoLock(info.source, () => addWorktree(info, false));
    return info;
  }

  #remote(): GitRemotes {
    if (!this.#remotes) throw new Error('git-remote resources are not available in this agent');
    return this.#remotes;
  }

  /**
   * Commits the sandbox as a checkpoint with git's plumbing (git-stage.ts): the paths a step wrote
   * when they are known and can be staged on their own, else everything. A repository made inside
   * the sandbox is refused ({@link NestedRepositoryError}).
   */
  async checkpoint(sandbox: SandboxInfo, label: string, changed?: readonly string[]): Promise<string> {
    const root = await this.#own(sandbox);
    const run = await this.#runner(sandbox, root);
    const links = await this.#refuseNestedLinks(run, sandbox, root);
    const req = { root, force: sandbox.kind === 'copy', nested: 'refuse', message: `checkpoint: ${label}` } as const;
    if (changed !== undefined && knownPathsUsable(root, changed, links)) {
      const paths = [...new Set(changed)];
      // A path git will not stage on its own (a file that became a directory…): the whole sandbox then.
      const known = await stageAndCommit(run, { ...req, paths }).catch((e: unknown) => {
        if (e instanceof GitError) return undefined;
        throw e;
      });
      if (known) return known;
    }
    return stageAndCommit(run, req);
  }

  async restore(sandbox: SandboxInfo, commit: string): Promise<void> {
    const root = await this.#own(sandbox);
    const run = await this.#runner(sandbox, root);
    const o = { confine: true, workTree: root };
    if (!SHA.test(commit)) throw new Error(`not a commit id: ${JSON.stringify(commit)}`);
    const sha = await outOf(run, root, ['rev-parse', '--verify', '-q', `${commit}^{commit}`], o).catch(() => {
      throw new Error(`no checkpoint ${commit} in the sandbox ${root}`);
    });
    const ancestor = await run.run(root, ['merge-base', '--is-ancestor', sandbox.baseCommit, sha], {
      ...o,
      okCodes: [1],
    });
    if (ancestor.code !== 0)
      throw new Error(`${commit} is not a checkpoint of the sandbox ${root} (it does not descend from its base)`);
    // `clean -ffdx`: nested repositories too (a second -f).
    await run.script(root, `g reset -q --hard "$C" && g clean -q -ffdx\n`, { ...o, vars: { C: sha } }, [
      'reset',
      '--hard',
      sha,
      '&&',
      'git',
      'clean',
      '-ffdx',
    ]);
  }

  async diff(sandbox: SandboxInfo): Promise<SandboxDiff> {
    const root = await this.#own(sandbox);
    const run = await this.#runner(sandbox, root);
    await this.#refuseNestedLinks(run, sandbox, root);
    return diffWorkTree(run, root, sandbox.baseCommit, { force: sandbox.kind === 'copy', nested: 'refuse' });
  }

  /**
   * git-worktree: pending work in the sandbox is first committed as a checkpoint "before apply"
   * (so the squash holds exactly what `diff` showed). Applies to one repository are serialised.
   */
  async apply(sandbox: SandboxInfo, message: string, resource?: ResourceDefinition): Promise<ApplyOutcome> {
    const root = await this.#own(sandbox);
    const run = await this.#runner(sandbox, root);
    if (sandbox.remote) {
      const r = remoteOf(sandbox, resource);
      return this.#repoLock(sandbox.source, async () => {
        if (await hasPendingWork(run, root)) await this.checkpoint(sandbox, 'before apply');
        return pushRemoteSandbox(this.#remote(), r, sandbox, message);
      });
    }
    const journals = await this.#journals();
    if (sandbox.kind === 'copy')
      return this.#repoLocks.run(sandbox.source, async () => {
        await this.#recover(sandbox.source);
        return applyCopySandbox(sandbox, run, journals);
      });
    return this.#repoLock(sandbox.source, async () => {
      if (await hasPendingWork(run, root)) await this.checkpoint(sandbox, 'before apply');
      return applyWorktreeSandbox(sandbox, message, journals);
    });
  }

  /**
   * Pending work is first committed as a checkpoint "before rebase"; the new base is written to the
   * sandbox's info (so `create` hands out the rebased sandbox). Serialised with applies to the repository.
   */
  async rebase(sandbox: SandboxInfo, resource?: ResourceDefinition): Promise<RebaseOutcome> {
    const root = await this.#own(sandbox);
    if (sandbox.kind !== 'git-worktree')
      throw new Error(`the sandbox of ${sandbox.resource} is a copy, not a git checkout: nothing to rebase`);
    const run = await this.#runner(sandbox, root);
    return this.#repoLock(sandbox.source, async () => {
      // The remote's current tip is what the plan must come onto.
      if (sandbox.remote) await this.#remote().sync(remoteOf(sandbox, resource));
      if (!(await exists(path.join(root, '.git'))))
        throw new Error(`the sandbox ${root} is gone: nothing to rebase (see agents plan status)`);
      const outcome = await rebaseWorktreeSandbox(run, sandbox, root, async () => {
        if (await hasPendingWork(run, root)) await this.checkpoint(sandbox, 'before rebase');
      });
      if (outcome.sandbox.baseCommit !== sandbox.baseCommit) await writeInfo(outcome.sandbox);
      return outcome;
    });
  }

  async assertReachable(sandbox: SandboxInfo, opts: { orGone?: boolean } = {}): Promise<void> {
    await this.#own(sandbox, opts.orGone !== true);
  }

  async unresolved(sandbox: SandboxInfo, files: readonly string[]): Promise<string[]> {
    return unresolvedFiles(await this.#own(sandbox), files);
  }

  async remove(sandbox: SandboxInfo): Promise<void> {
    const root = await this.#own(sandbox, false);
    this.#runners.get(root)?.close();
    this.#runners.delete(root);
    this.#gitlinks.delete(root);
    configGuard.forget(root);
    if (sandbox.kind === 'git-worktree') {
      const branch = sandbox.branch;
      if (!branch?.startsWith(BRANCH_PREFIX))
        throw new Error(`refusing to delete branch ${String(branch)}: not a plan branch`);
      const repo = await stat(sandbox.source).then(
        (s) => s.isDirectory(),
        () => false,
      );
      if (repo) {
        // Serialised with creates (see worktree-create.ts).
        await this.#repoLock(sandbox.source, () => removeWorktree(sandbox.source, root, branch));
      }
    }
    await rm(root, { recursive: true, force: true });
    await rm(ioDir(root), { recursive: true, force: true });
    await rm(infoFile(root), { force: true });
    await rmdir(path.dirname(root)).catch(() => undefined);
  }

  /**
   * Completes or rolls back every apply a crash interrupted (see worktree-apply.ts, copy-apply.ts);
   * called by the composition root at start-up. Returns what was done, for the log.
   */
  async recoverApplies(): Promise<RecoveredApply[]> {
    return recoverEveryRepository(await this.#journals(), (repository) => this.#recover(repository, true));
  }

  /** Stops the sandboxes' confined git helpers (the agent is stopping). */
  close(): void {
    for (const r of this.#runners.values()) r.close();
    this.#runners.clear();
  }

  /**
   * The sandbox's git: its confined helper when commands are confined (made on first use), else
   * git run here. A worktree's helper writes the repository's git directory (objects, the plan
   * branch, the worktree's index); a copy's git directory is inside the sandbox.
   */
  async #runner(sandbox: SandboxInfo, root: string): Promise<GitRunner> {
    const confinement = await this.#confinement;
    if (confinement?.mode !== 'bubblewrap') return directGit;
    let r = this.#runners.get(root);
    if (!r) {
      const files = sandbox.kind === 'git-worktree' ? worktreeFiles(root) : undefined;
      const writable = files ? [...new Set([files.common, files.gitDir])].filter((d) => !inside(files.common, d)) : [];
      r = new ConfinedGit({ confinement, root, io: ioDir(root), writable });
      this.#runners.set(root, r);
    }
    return r;
  }

  /** The sandbox's submodule paths (see {@link submodulePaths}), refused when one holds a repository. */
  async #refuseNestedLinks(run: GitRunner, sandbox: SandboxInfo, root: string): Promise<string[]> {
    if (sandbox.kind === 'copy') return [];
    let known = this.#gitlinks.get(root);
    if (known?.base !== sandbox.baseCommit) {
      known = { base: sandbox.baseCommit, paths: await submodulePaths(run, root, sandbox.baseCommit) };
      this.#gitlinks.set(root, known);
    }
    const planted = known.paths.filter((p) => existsSync(path.join(root, p, '.git')));
    if (planted.length > 0) throw new NestedRepositoryError(root, planted);
    return known.paths;
  }

  /**
   * The repository's lock, in this process and across processes (repository-lock.ts): each local
   * CLI command runs its own agent, so two commands on one repository are two processes. An apply
   * a crash interrupted is finished first.
   */
  #repoLock<T>(source: string, work: () => Promise<T>): Promise<T> {
    return this.#repoLocks.run(source, () =>
      withRepositoryLock(source, async () => {
        await this.#recover(source);
        return work();
      }),
    );
  }

  /**
   * Recovers the interrupted applies into one repository; `lock`: taking its lock (the caller
   * holds it otherwise). Throws when one cannot be recovered: nothing may be applied on top.
   */
  async #recover(repository: string, lock = false): Promise<RecoveredApply[]> {
    const journals = await this.#journals();
    const mine = journals.list().filter((e) => e.journal?.repository === repository);
    if (mine.length === 0) return [];
    const work = (): Promise<RecoveredApply[]> => recoverJournals(journals, repository);
    // A copy's directory and a repository that is gone have no lock file; this process's lock serves.
    const fileLock = mine.some((e) => e.journal?.kind === 'worktree') && existsSync(repository);
    if (!lock) return work();
    return this.#repoLocks.run(repository, () => (fileLock ? withRepositoryLock(repository, work) : work()));
  }

  /** The apply journals (not creating our root: a start-up with nothing to recover leaves no trace). */
  async #journals(): Promise<ApplyJournals> {
    return new ApplyJournals(await realish(this.#configured));
  }

  /** The sandboxes' root, created and resolved once (git reports real paths; so do we). */
  #root(): Promise<string> {
    this.#base ??= mkdir(this.#configured, { recursive: true, mode: 0o700 }).then(() => realpath(this.#configured));
    return this.#base;
  }

  /** The sandbox's root, once it is one of ours ({@link ownedRoot}): nothing outside our root is ever touched. */
  async #own(sandbox: SandboxInfo, mustExist = true): Promise<string> {
    return ownedRoot(sandbox.root, await this.#root(), this.#configured, mustExist);
  }
}
