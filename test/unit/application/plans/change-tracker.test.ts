import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChangeTracker } from '../../../../src/application/plans/change-tracker.ts';
import type { ToolDefinition } from '../../../../src/domain/registry/tool.definition.ts';

const builtin = (name: string, writes: boolean): ToolDefinition =>
  ({ name: `builtin/${name}`, source: 'builtin', writes }) as ToolDefinition;
const write = builtin('write-file', true);
const read = builtin('read-file', false);
const command = builtin('run-command', true);
const ok = (...files: string[]) => ({ ok: true, filesTouched: files });

describe('ChangeTracker', () => {
  it('knows the paths the built-in file tools wrote since the last checkpoint, and starts afresh after one', () => {
    const t = new ChangeTracker(true);
    assert.deepEqual(t.since(), []);
    t.ran(write, ok('a.txt'), 0);
    t.ran(read, ok(), 0);
    t.ran(builtin('edit-file', true), ok('src/b.ts', 'a.txt'), 0);
    assert.deepEqual(t.since()?.sort(), ['a.txt', 'src/b.ts']);
    t.checkpointed();
    assert.deepEqual(t.since(), []);
  });

  it('does not know them before the first checkpoint, after a command, a failed write or a hook', () => {
    assert.equal(new ChangeTracker(false).since(), undefined, 'the sandbox may hold anything');
    const cases: Array<[string, (t: ChangeTracker) => void]> = [
      ['a command', (t) => t.ran(command, ok('c.txt'), 0)],
      ['a tool from the registry', (t) => t.ran({ ...write, source: 'command' }, ok(), 0)],
      ['a write that failed part-way', (t) => t.ran(write, { ok: false, filesTouched: [] }, 0)],
      ['a hook before the call', (t) => t.ran(write, ok('a.txt'), 1)],
      ['a hook after it', (t) => t.hooks(1)],
    ];
    for (const [what, step] of cases) {
      const t = new ChangeTracker(true);
      t.ran(write, ok('a.txt'), 0);
      step(t);
      assert.equal(t.since(), undefined, what);
      t.checkpointed();
      assert.deepEqual(t.since(), [], `${what}: known again after the checkpoint`);
    }
    const failedRead = new ChangeTracker(true);
    failedRead.ran(read, { ok: false, filesTouched: [] }, 0);
    assert.deepEqual(failedRead.since(), [], 'a reader that failed changed nothing');
  });
});
