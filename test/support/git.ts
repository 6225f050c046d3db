import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * A new git repository at `repo` on branch main with one commit of `files` (path → content, in
 * subdirectories too); its committer identity is kept in its config, so later commits work. Returns
 * a `git` bound to the repository (output trimmed).
 */
export function initRepo(repo: string, files: Record<string, string>): (...args: string[]) => string {
  mkdirSync(repo, { recursive: true });
  const git = (...args: string[]): string => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'e2e');
  git('config', 'user.email', 'e2e@example.invalid');
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), content);
  }
  git('add', '-A');
  git('commit', '-q', '--allow-empty', '-m', 'init');
  return git;
}
