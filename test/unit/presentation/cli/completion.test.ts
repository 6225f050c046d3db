import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import { buildProgram, runCli, type CliIo } from '../../../../src/presentation/cli/index.ts';
import { completionScript } from '../../../../src/presentation/cli/completion.ts';
import { eventually } from '../../../support/eventually.ts';

const host = { version: '1.2.3', serve: async () => 0 };
const program = buildProgram(host);
const dir = mkdtempSync(join(tmpdir(), 'ca-completion-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const has = (shell: string): boolean => spawnSync(shell, ['-c', 'exit 0']).status === 0;
const zshSkip = !has('zsh') ? 'zsh is not installed' : !has('tmux') ? 'tmux is not installed' : false;

/** The completion script of a shell, written once to a file in the test's directory. */
function scriptFile(shell: 'zsh' | 'fish'): string {
  const file = join(dir, shell === 'zsh' ? '_agents' : 'agents.fish');
  if (!existsSync(file)) writeFileSync(file, completionScript(shell, program));
  return file;
}

/** What fish itself completes for a command line (`complete -C`), the candidates without their descriptions. */
function fishComplete(line: string): string[] {
  const out = execFileSync(
    'fish',
    ['--no-config', '-c', 'source $argv[1]; complete -C $argv[2]', scriptFile('fish'), line],
    {
      encoding: 'utf8',
    },
  );
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t')[0] ?? '')
    .sort();
}

/** What bash completes for the words of a command line (the last word is the one under the cursor). */
function bashComplete(...words: string[]): string[] {
  const file = join(dir, 'agents.bash');
  writeFileSync(file, completionScript('bash', program));
  const script = `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _agents; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const out = execFileSync('bash', ['-c', script, 'bash', file, ...words], { encoding: 'utf8' });
  return out.split('\n').filter(Boolean).sort();
}

describe('agents completion', () => {
  it('bash: completes commands, subcommands and options from the command tree', () => {
    assert.deepEqual(bashComplete('agents', 'pl'), ['plan']);
    const planSubs = program.commands
      .find((c) => c.name() === 'plan')!
      .commands.flatMap((c) => [c.name(), ...c.aliases()]);
    assert.deepEqual(bashComplete('agents', 'plan', ''), [...planSubs].sort());
    assert.ok(planSubs.includes('use') && planSubs.includes('apply'));
    assert.deepEqual(bashComplete('agents', 'plan', 'ap'), planSubs.filter((s) => s.startsWith('ap')).sort());
    assert.ok(bashComplete('agents', 'plan', 'ap').includes('apply'));
    // Options of the command and the global ones; an option's value is skipped over.
    assert.deepEqual(bashComplete('agents', 'plan', 'use', '--go'), ['--goal']);
    assert.deepEqual(bashComplete('agents', '--tenant', 'team', 'plan', 'apply', '--y'), ['--yes']);
    assert.deepEqual(bashComplete('agents', 'plan', 'apply', '--ten'), ['--tenant']);
    // A global option's value is not taken for a command.
    assert.deepEqual(bashComplete('agents', '--format', 'plan', 'ap'), []);
  });

  it('is printed by agents completion <shell>, and refuses another shell', async () => {
    const stdout = new PassThrough();
    let text = '';
    stdout.on('data', (b: Buffer) => (text += b.toString()));
    const io = { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env: {} } as unknown as CliIo;
    assert.equal(await runCli(['node', 'agents', '--format', 'plain', 'completion', 'bash'], host, io), 0);
    assert.equal(text, completionScript('bash', buildProgram(host)));
    const bad = { ...io, stdout: new PassThrough(), stderr: new PassThrough() } as unknown as CliIo;
    assert.equal(await runCli(['node', 'agents', 'completion', 'tcsh'], host, bad), 2);
  });

  it('zsh: the script parses (zsh -n)', { skip: has('zsh') ? false : 'zsh is not installed' }, () => {
    execFileSync('zsh', ['-n', scriptFile('zsh')]);
  });

  it('zsh: completes in a real zsh line editor (compinit, Tab)', { skip: zshSkip }, async () => {
    const socket = `ca-completion-${process.pid}`;
    const tmux = (...args: string[]): string => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
    const home = join(dir, 'zsh-home');
    mkdirSync(home, { recursive: true });
    const screen = (): string => tmux('capture-pane', '-p', '-t', 'z');
    const see = (re: RegExp): Promise<string> =>
      eventually(() => Promise.resolve(re.test(screen()) ? screen() : undefined), 10_000, String(re)).catch(
        (err: Error) => {
          throw new Error(`${err.message}; the screen:\n${screen()}`);
        },
      );
    try {
      // zsh -f: no user or system startup files, so the prompt and completion setup are ours alone.
      tmux('new-session', '-d', '-s', 'z', '-x', '120', '-y', '30', 'env', `HOME=${home}`, 'PS1=zsh$ ', 'zsh', '-f');
      tmux('send-keys', '-t', 'z', '-l', `autoload -U compinit && compinit -u -D && source ${scriptFile('zsh')}`);
      tmux('send-keys', '-t', 'z', 'Enter');
      await see(/^zsh\$\s*$/m);
      tmux('send-keys', '-t', 'z', '-l', 'agents pl');
      tmux('send-keys', '-t', 'z', 'Tab');
      await see(/^zsh\$ agents plan\s*$/m);
      tmux('send-keys', '-t', 'z', '-l', 'use --go');
      tmux('send-keys', '-t', 'z', 'Tab');
      await see(/^zsh\$ agents plan use --goal\s*$/m);
    } finally {
      try {
        tmux('kill-server');
      } catch {
        // the server had already gone
      }
    }
  });

  it('fish: the script parses (fish -n)', { skip: has('fish') ? false : 'fish is not installed' }, () => {
    execFileSync('fish', ['-n', scriptFile('fish')]);
  });

  it(
    'fish: completes commands, subcommands and options (complete -C)',
    { skip: has('fish') ? false : 'fish is not installed' },
    () => {
      assert.deepEqual(fishComplete('agents pl'), ['plan']);
      assert.deepEqual(fishComplete('agents plan ap'), ['apply', 'approve']);
      assert.deepEqual(fishComplete('agents plan use --go'), ['--goal']);
      assert.deepEqual(fishComplete('agents --tenant team plan apply --y'), ['--yes']);
      assert.deepEqual(fishComplete('agents plan apply --ten'), ['--tenant']);
      // The value of a global option is not taken for a command: `plan` here is --format's value.
      assert.ok(!fishComplete('agents --format plan ap').includes('apply'));
    },
  );

  it('zsh and fish scripts offer the same commands and options as bash', () => {
    const zsh = completionScript('zsh', program);
    const fish = completionScript('fish', program);
    assert.match(zsh, /^ {4}'plan'\) subs='use [^']*apply/m);
    assert.match(zsh, /^ {4}'plan use'\) subs=''; opts='[^']*--goal/m);
    assert.match(fish, /-n '__agents_at \\'plan\\'' -a 'apply'/);
    assert.match(fish, /-n '__agents_at \\'plan use\\'' -l goal -r -F/);
  });
});
