/** Recovery of the applies a crash interrupted, journal by journal (see worktree-apply.ts, copy-apply.ts). */
import { existsSync } from 'node:fs';
import { messageOf } from '../../domain/errors.ts';
import type { ApplyJournals } from './apply-journal.ts';
import { recoverCopyApply } from './copy-apply.ts';
import { recoverWorktreeApply } from './worktree-apply.ts';

/** What the recovery of one journal did, for the log. */
export interface RecoveredApply {
  journal: string;
  repository: string;
  /** `left`: the branch or HEAD moved since, or the repository is gone: nothing was changed. */
  outcome: 'rolled-back' | 'completed' | 'left' | 'failed';
  detail: string;
}

/**
 * Recovers every journal of `repository` (the caller holds its lock) and removes each; throws the
 * first failure (its journal is kept, for the next try).
 */
export async function recoverJournals(journals: ApplyJournals, repository: string): Promise<RecoveredApply[]> {
  const out: RecoveredApply[] = [];
  for (const { file, journal } of journals.list()) {
    if (journal?.repository !== repository) continue;
    let r: Pick<RecoveredApply, 'outcome' | 'detail'>;
    if (!existsSync(repository)) r = { outcome: 'left', detail: `${repository} is gone` };
    else if (journal.kind === 'copy') r = recoverCopyApply(journal);
    else r = await recoverWorktreeApply(journal);
    journals.remove(file);
    out.push({ journal: file, repository, ...r });
  }
  return out;
}

/**
 * Every repository with a journal, recovered in turn by `recover` (which takes its lock); an
 * unreadable journal, or a repository that could not be recovered, is reported as failed.
 */
export async function recoverEveryRepository(
  journals: ApplyJournals,
  recover: (repository: string) => Promise<RecoveredApply[]>,
): Promise<RecoveredApply[]> {
  const entries = journals.list();
  const out: RecoveredApply[] = entries
    .filter((e) => e.journal === undefined)
    .map((e) => ({
      journal: e.file,
      repository: '',
      outcome: 'failed',
      detail: `unreadable journal: ${e.broken ?? ''}`,
    }));
  for (const repository of new Set(entries.flatMap((e) => (e.journal ? [e.journal.repository] : [])))) {
    try {
      out.push(...(await recover(repository)));
    } catch (e) {
      out.push({ journal: '', repository, outcome: 'failed', detail: messageOf(e) });
    }
  }
  return out;
}
