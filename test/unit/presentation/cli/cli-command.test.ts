import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { CliCommand, declaredCallsOf } from '../../../../src/presentation/cli/cli-command.ts';
import { commandMethods } from '../../../../src/presentation/cli/command-methods.ts';
import { getTask, subscribeToTask } from '../../../../src/protocol/client/index.ts';

describe('commands declare their calls where they are registered', () => {
  it('reads each declaring command by its path, each method named once, from subcommands made by the tree', () => {
    const root = new CliCommand('agents');
    const task = root.command('task');
    task.command('watch').calls(subscribeToTask, getTask, getTask);
    task.command('get').calls(getTask);
    root.command('logout');
    assert.ok(task instanceof CliCommand, 'a subcommand can declare too');
    assert.deepEqual(commandMethods(root), {
      'task watch': ['SubscribeToTask', 'GetTask'],
      'task get': ['GetTask'],
    });
  });
  it('gives a command that declared nothing, or a plain commander Command, no methods', () => {
    assert.deepEqual(declaredCallsOf(new CliCommand('logout')), []);
    assert.deepEqual(declaredCallsOf(new Command('other')), []);
  });
});
