import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import { buildProgram, runCli, type CliIo } from '../../../../src/presentation/cli/index.ts';
import { completionScript } from '../../../../src/presentation/cli/completion.ts';

const host = { version: '1.2.3', serve: async () => 0 };
const program = buildProgram(host);
const dir = mkdtempSync(join(tmpdir(), 'ca-completion-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const has = (shell: string): boolean => spawnSync(shell, ['-c', 'exit 0']).status === 0;

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
    const file = join(dir, '_agents');
    writeFileSync(file, completionScript('zsh', program));
    execFileSync('zsh', ['-n', file]);
  });

  it('fish: the script parses (fish -n)', { skip: has('fish') ? false : 'fish is not installed' }, () => {
    const file = join(dir, 'agents.fish');
    writeFileSync(file, completionScript('fish', program));
    execFileSync('fish', ['-n', file]);
  });

  it('zsh and fish scripts offer the same commands and options as bash', () => {
    const zsh = completionScript('zsh', program);
    const fish = completionScript('fish', program);
    assert.match(zsh, /^ {4}'plan'\) subs='use [^']*apply/m);
    assert.match(zsh, /^ {4}'plan use'\) subs=''; opts='[^']*--goal/m);
    assert.match(fish, /-n '__agents_at \\'plan\\'' -a 'apply'/);
    assert.match(fish, /-n '__agents_at \\'plan use\\'' -l goal -r -F/);
  });
});
