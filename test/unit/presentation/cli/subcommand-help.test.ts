import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { buildProgram, runCli, type CliIo } from '../../../../src/presentation/cli/index.ts';

const host = { version: '1.2.3', serve: async () => 0 };

async function help(...words: string[]): Promise<string> {
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (b: Buffer) => (text += b.toString()));
  const io = { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env: {} } as unknown as CliIo;
  assert.equal(await runCli(['node', 'agents', ...words, '--help'], host, io), 0);
  return text;
}

describe("a subcommand's --help", () => {
  it('shows its usage, its own options and its examples first, then the global options once, compactly', async () => {
    const text = await help('plan', 'use');
    const at = (s: string): number => {
      const i = text.indexOf(s);
      assert.ok(i >= 0, `missing ${s}:\n${text}`);
      return i;
    };
    assert.ok(text.startsWith('Usage: agents plan use'), text);
    assert.ok(at('Options:') < at('\n  --goal <text>'));
    assert.ok(at('\n  --goal <text>') < at('Examples:'));
    assert.ok(at('Examples:') < at('Global options'));
    assert.match(text, /^ {2}agents plan use builtin\/replace local\/app --arg pattern=x/m);
    assert.equal(text.match(/--tenant/g)?.length, 1, 'the global options once');
    assert.ok(!text.includes('Global Options:'), "commander's full global option list is gone");
    // Compact: every global option on a few lines at the end, not a line or more each.
    const globals = text.slice(at('Global options'));
    assert.ok(globals.trimEnd().split('\n').length <= 4, globals);
    for (const flag of ['--format <format>', '--server <url>', '--local', '--data-dir <dir>', '--verbose'])
      assert.ok(globals.includes(flag), `${flag} in ${globals}`);
  });

  it('gives examples to the commands people reach for first', async () => {
    for (const cmd of [['send'], ['chat'], ['session'], ['plan', 'execute'], ['plan', 'apply'], ['actor', 'add']]) {
      const text = await help(...cmd);
      assert.match(text, new RegExp(`Examples:\\n {2}agents ${cmd.join(' ')}`), text);
    }
  });

  it('still describes the global options in full at the top level', async () => {
    const text = await help();
    assert.match(text, /--tenant <namespace> +the namespace commands act in/);
    assert.ok(!text.includes('Global options (described in'), text);
  });

  it('fits 80 columns for every command, with one blank line between its parts', async () => {
    const paths: string[][] = [];
    const walk = (cmd: Command, path: string[]): void => {
      paths.push(path);
      for (const c of cmd.commands) walk(c, [...path, c.name()]);
    };
    walk(buildProgram(host), []);
    const wide: string[] = [];
    for (const path of paths) {
      const text = await help(...path);
      // Characters, not bytes: the help has →, — and ….
      for (const line of text.split('\n')) if ([...line].length > 80) wide.push(`agents ${path.join(' ')}: ${line}`);
      assert.doesNotMatch(text, /\n\n\n/, `agents ${path.join(' ')} --help has two blank lines in a row:\n${text}`);
    }
    assert.deepEqual(wide, []);
  });
});
