import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { UsageError } from '../exit-codes.ts';

/** Runs git in `cwd` and returns its output (trimmed); a missing git or a failure is a usage error. */
export function git(cwd: string, args: string[]): string {
  try {
    return execFileSync('git', args, {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
    }).trimEnd();
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT')
      throw new UsageError('the demo needs git, and git was not found', 'install git and run agents demo again');
    throw new UsageError(`git ${args.join(' ')} failed in ${cwd}: ${(e.stderr ?? e.message).trim().split('\n')[0]}`);
  }
}

const SAMPLE_FILES: Record<string, string> = {
  'README.md':
    '# Palette demo\n\nA tiny app whose source spells colour the British way. The plan changes `src/**/*.ts` only,\nso this colour stays as it is.\n',
  'src/palette.ts': [
    '// The colour palette of the app.',
    "export const colours = { primary: '#3366ff', accent: '#ff9933', muted: '#888888' };",
    '',
    'export type Name = keyof typeof colours;',
    '',
    '/** The hex value of a named colour. */',
    'export function colourOf(name: Name): string {',
    '  return colours[name];',
    '}',
    '',
  ].join('\n'),
  'src/theme.ts': [
    "import { colourOf, type Name } from './palette.js';",
    '',
    '/** The background colour of a theme: dark, or the primary colour. */',
    "export const background = (dark: boolean): string => (dark ? '#111111' : colourOf('primary'));",
    '',
    "export const highlight: Name = 'accent'; // the colour of links",
    '',
  ].join('\n'),
};

/** A sample git repository (one commit on `main`) in a new temporary directory. */
export function createSampleRepo(): { root: string; repo: string } {
  const root = mkdtempSync(join(tmpdir(), 'cleveragents-demo-'));
  const repo = join(root, 'palette');
  mkdirSync(join(repo, 'src'), { recursive: true });
  for (const [path, text] of Object.entries(SAMPLE_FILES)) writeFileSync(join(repo, path), text);
  git(repo, ['-c', 'init.defaultBranch=main', 'init', '-q']);
  git(repo, ['config', 'user.name', 'CleverAgents demo']);
  git(repo, ['config', 'user.email', 'demo@cleveragents.invalid']);
  git(repo, ['config', 'commit.gpgsign', 'false']);
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '--no-verify', '-m', 'Initial commit: a palette that spells colour']);
  return { root, repo };
}

/** The user's repository: its top-level directory and checked-out branch. */
export function userRepo(path: string): { repo: string; branch: string } {
  const dir = resolve(path);
  let repo: string;
  try {
    repo = git(dir, ['rev-parse', '--show-toplevel']);
  } catch {
    throw new UsageError(`${dir} is not inside a git work tree`, 'give --repo the path of a git checkout');
  }
  return { repo, branch: currentBranch(repo) };
}

export function currentBranch(repo: string): string {
  try {
    return git(repo, ['symbolic-ref', '--short', 'HEAD']);
  } catch {
    throw new UsageError(
      `${repo} has no branch checked out (detached HEAD)`,
      'check out the branch the result should land on',
    );
  }
}
