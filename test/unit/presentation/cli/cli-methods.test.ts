import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { CONTRACTS } from '../../../../src/protocol/client/index.ts';
import { buildProgram } from '../../../../src/presentation/cli/index.ts';
import {
  COMMAND_METHODS,
  NO_COMMAND_EXPECTED,
  SERVER_COMMANDS,
} from '../../../../src/presentation/cli/command-methods.ts';

const leaves = (c: Command, prefix: string[] = []): string[] =>
  c.commands.length === 0 ? [prefix.join(' ')] : c.commands.flatMap((s) => leaves(s, [...prefix, s.name()]));

describe('the CLI and the method table', () => {
  const commands = leaves(buildProgram({ version: 'test', serve: async () => 0 })).filter((c) => c !== '');
  const methods = new Set(CONTRACTS.map((m) => m.name));

  it('maps every command to the methods it calls, and only to methods that exist', () => {
    for (const c of commands) {
      if (SERVER_COMMANDS.includes(c)) continue;
      const called = COMMAND_METHODS[c];
      assert.ok(called && called.length > 0, `command "${c}" calls no method`);
      for (const m of called) assert.ok(methods.has(m), `command "${c}" names unknown method ${m}`);
    }
    for (const c of Object.keys(COMMAND_METHODS))
      assert.ok(commands.includes(c), `COMMAND_METHODS lists "${c}", which is not a command`);
  });

  it('has a command for every method a person would call, and says why for the rest', () => {
    const used = new Set(Object.values(COMMAND_METHODS).flat());
    const missing = [...methods].filter((m) => !used.has(m) && !(m in NO_COMMAND_EXPECTED));
    assert.deepEqual(missing, [], 'methods without a CLI command');
    for (const m of Object.keys(NO_COMMAND_EXPECTED)) assert.ok(methods.has(m), `${m} is not a method`);
  });
});
