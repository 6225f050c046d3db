import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../../../../../src/presentation/cli/index.ts';
import { approvalError } from '../../../../../src/presentation/cli/support/plan-follow.ts';

const program = buildProgram({ version: 'test', serve: async () => 0 });
const command = (...path: string[]): Command =>
  path.reduce<Command>((c, name) => {
    const sub = c.commands.find((s) => s.name() === name);
    assert.ok(sub, `no command ${name}`);
    return sub;
  }, program);

/** The options a message tells the user to add to the command they ran (outside the `agents …` commands it names). */
const bareFlags = (message: string): string[] =>
  message.replace(/\bagents [^,;()]*/g, '').match(/--[a-z][\w-]*/g) ?? [];

describe('the error of a run that waits for an approval', () => {
  for (const request of [
    { kind: 'apply' as const, files: ['M a.ts'] },
    { kind: 'tool-call' as const, step: 1, of: 1, tool: 'builtin/replace-in-files' },
  ]) {
    it(`names only options that the commands which wait for it have (${request.kind})`, () => {
      const err = approvalError('01PLAN', '01TASK', request);
      const flags = bareFlags(err.message);
      assert.ok(flags.includes('--yes'), err.message);
      for (const path of [
        ['plan', 'execute'],
        ['plan', 'apply'],
      ]) {
        const options = command(...path).options.map((o) => o.long);
        for (const flag of flags)
          assert.ok(options.includes(flag), `agents ${path.join(' ')} has no ${flag}: ${err.message}`);
      }
    });
  }
});
