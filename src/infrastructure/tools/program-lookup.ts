import { access, constants, realpath } from 'node:fs/promises';
import path from 'node:path';

/** The search path when the environment names none. */
export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The first executable `program` on `searchPath` (absolute directories only). */
export async function which(program: string, searchPath: string): Promise<string | undefined> {
  for (const dir of searchPath.split(':')) {
    if (!dir.startsWith('/')) continue;
    const p = path.join(dir, program);
    if (
      await access(p, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return p;
  }
  return undefined;
}

/**
 * Resolves a program as execvp would, among the paths `seen` says exist where it runs (the path
 * and, through symlinks, what it points to).
 */
export async function resolveProgram(
  program: string,
  cwd: string,
  env: Record<string, string>,
  seen: (p: string) => boolean,
): Promise<string | undefined> {
  const executable = async (p: string): Promise<boolean> =>
    seen(p) &&
    (await access(p, constants.X_OK).then(
      () => true,
      () => false,
    )) &&
    seen(await realpath(p));
  if (program.includes('/')) {
    const p = path.resolve(cwd, program);
    return (await executable(p)) ? p : undefined;
  }
  for (const dir of (env['PATH'] ?? DEFAULT_PATH).split(':')) {
    if (!dir.startsWith('/')) continue;
    const p = path.join(dir, program);
    if (await executable(p)) return p;
  }
  return undefined;
}
