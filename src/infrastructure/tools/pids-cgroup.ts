/**
 * The process-count limit of confined commands: a cgroup v1 `pids` group per command, with
 * `pids.max`, where a writable pids hierarchy exists (typically as root on a host or a VM).
 * `RLIMIT_NPROC` does not bind root and counts every process of the user, so it is not used.
 */
import { randomBytes } from 'node:crypto';
import { access, constants, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** A writable cgroup v1 pids hierarchy, or undefined (checked by creating and removing a group). */
export async function pidsCgroupRoot(dir: string | null): Promise<string | undefined> {
  if (!dir) return undefined;
  try {
    await access(path.join(dir, 'cgroup.procs'), constants.W_OK);
    const parent = path.join(dir, 'cleveragents');
    await mkdir(parent, { recursive: true });
    const test = path.join(parent, `probe-${process.pid}-${randomBytes(4).toString('hex')}`);
    await mkdir(test);
    await writeFile(path.join(test, 'pids.max'), '1');
    await rmdir(test);
    return parent;
  } catch {
    return undefined;
  }
}

/** A group for one command allowing `max` processes, or undefined when it cannot be made. */
export async function createPidsCgroup(parent: string, max: number): Promise<string | undefined> {
  const dir = path.join(parent, `cmd-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    await mkdir(dir);
    await writeFile(path.join(dir, 'pids.max'), String(max));
    return dir;
  } catch {
    await rmdir(dir).catch(() => {});
    return undefined;
  }
}

/** Reads whether the limit was hit, then removes the group (its last processes may take a moment to go). */
export async function releaseCgroup(dir: string): Promise<{ processLimitHit: boolean }> {
  const events = await readFile(path.join(dir, 'pids.events'), 'utf8').catch(() => '');
  const processLimitHit = Number(/^max (\d+)/m.exec(events)?.[1] ?? 0) > 0;
  // The group stays busy for a moment after its last process exits: remove it in the background
  // rather than make the command's answer wait (that wait was most of a confined command's overhead).
  void removeWhenEmpty(dir);
  return { processLimitHit };
}

async function removeWhenEmpty(dir: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    try {
      await rmdir(dir);
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EBUSY') return;
      await new Promise((r) => setTimeout(r, i === 0 ? 5 : 20));
    }
  }
}
