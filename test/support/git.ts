import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A new git repository at `repo` on branch main with one commit of `files` (path → content). */
export function initRepo(repo: string, files: Record<string, string>): (...args: string[]) => string {
  mkdirSync(repo, { recursive: true });
  const git = (...args: string[]): string => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  for (const [path, content] of Object.entries(files)) writeFileSync(join(repo, path), content);
  git('add', '.');
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'init');
  return git;
}
