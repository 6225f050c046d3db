import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diffFiles } from '../../../../src/application/plans/plan-diff-files.ts';
import {
  diffContent,
  PlanEntries,
  planAnswerOf,
  planPermissionOptions,
  AVAILABLE_COMMANDS,
  slashCommandOf,
  unknownCommandText,
} from '../../../../src/presentation/acp/plan-updates.ts';

const MODIFIED = [
  'diff --git a/src/a.js b/src/a.js',
  'index 1111111..2222222 100644',
  '--- a/src/a.js',
  '+++ b/src/a.js',
  '@@ -1,3 +1,3 @@',
  ' one',
  '-two',
  '+TWO',
  ' three',
  '',
].join('\n');
const ADDED = [
  'diff --git a/new.txt b/new.txt',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/new.txt',
  '@@ -0,0 +1,2 @@',
  '+hello',
  '+world',
  '',
].join('\n');
const NO_NEWLINE = [
  'diff --git a/n.txt b/n.txt',
  '--- a/n.txt',
  '+++ b/n.txt',
  '@@ -1 +1 @@',
  '-x',
  '+y',
  '\\ No newline at end of file',
  '',
].join('\n');

const statuses = (e: PlanEntries): string[] => {
  const u = e.update();
  return u.sessionUpdate === 'plan' ? u.entries.map((x) => x.status) : [];
};

describe('ACP slash commands', () => {
  it('a prompt starting with a known command is that command, its rest the argument', () => {
    assert.deepEqual(slashCommandOf('/plan fix the date test\nplease'), {
      kind: 'plan-command',
      name: 'plan',
      arg: 'fix the date test\nplease',
    });
    assert.deepEqual(slashCommandOf('  /Execute'), { kind: 'plan-command', name: 'execute', arg: '' });
    assert.deepEqual(slashCommandOf('/apply 01ABC'), { kind: 'plan-command', name: 'apply', arg: '01ABC' });
  });

  it('an unknown /word is unknown; text that does not start with a command is no command', () => {
    assert.deepEqual(slashCommandOf('/frob x'), { kind: 'unknown', name: 'frob' });
    assert.equal(slashCommandOf('what does /plan do?'), undefined);
    assert.equal(slashCommandOf('/ not a command'), undefined);
    assert.match(
      unknownCommandText('frob'),
      /^\/frob is not a command here\. The commands are: \/plan <goal>, \/execute/,
    );
  });

  it("the chat's commands are commands too, offered after the plan ones; /clear is left to the editor", () => {
    assert.deepEqual(slashCommandOf('/cost'), { kind: 'chat-command', name: 'cost', arg: '' });
    assert.deepEqual(slashCommandOf('/Model local/coder'), { kind: 'chat-command', name: 'model', arg: 'local/coder' });
    assert.deepEqual(slashCommandOf('/undo 2 --force'), { kind: 'chat-command', name: 'undo', arg: '2 --force' });
    assert.deepEqual(slashCommandOf('/diff 2'), { kind: 'plan-command', name: 'diff', arg: '2' }, 'the bridge decides');
    assert.deepEqual(slashCommandOf('/clear'), { kind: 'unknown', name: 'clear' });
    assert.deepEqual(
      AVAILABLE_COMMANDS.map((c) => c.name),
      ['plan', 'execute', 'diff', 'apply', 'cancel', 'model', 'undo', 'compact', 'cost', 'tools', 'context'],
    );
    assert.match(
      unknownCommandText('frob'),
      /The commands are: \/plan <goal>, \/execute, \/diff \[turn\], \/apply, \/cancel, \/model \[actor\], \/undo \[turn\], \/compact \[keep\], \/cost, \/tools, \/context\./,
    );
  });
});

describe('ACP plan entries', () => {
  it('start pending; while executing, the ones done complete and the next is in progress; all complete at the end', () => {
    const e = new PlanEntries(['a', 'b', 'c']);
    assert.deepEqual(statuses(e), ['pending', 'pending', 'pending']);
    assert.equal(e.progress('strategize', 'complete', 0), undefined, 'strategize moves nothing');
    assert.deepEqual(e.progress('execute', 'processing', 0)?.sessionUpdate, 'plan');
    assert.deepEqual(statuses(e), ['in_progress', 'pending', 'pending']);
    assert.equal(e.progress('execute', 'processing', 0), undefined, 'no update when nothing changed');
    e.progress('execute', 'processing', 2);
    assert.deepEqual(statuses(e), ['completed', 'completed', 'in_progress']);
    // More tool calls than decisions (a goal plan): the last entry stays in progress until the end.
    e.progress('execute', 'processing', 7);
    assert.deepEqual(statuses(e), ['completed', 'completed', 'in_progress']);
    e.progress('execute', 'complete', 7);
    assert.deepEqual(statuses(e), ['completed', 'completed', 'completed']);
  });

  it('a failed execution leaves the failing entry in progress (ACP has no failed entry)', () => {
    const e = new PlanEntries(['a', 'b']);
    e.progress('execute', 'processing', 1);
    e.progress('execute', 'errored', 1);
    assert.deepEqual(statuses(e), ['completed', 'in_progress']);
  });
});

describe('ACP plan approvals', () => {
  const step = { kind: 'tool-call' as const, step: 1, tool: 'builtin/run' };

  it('offer "always allow" only where the plan\'s run takes it (a goal plan\'s tool call), never "always reject"', () => {
    const kinds = (r: Parameters<typeof planPermissionOptions>[0]): string[] =>
      planPermissionOptions(r).map((o) => o.kind);
    assert.deepEqual(kinds({ ...step, options: ['approve', 'always', 'reject', 'reject-with-guidance'] }), [
      'allow_once',
      'allow_always',
      'reject_once',
    ]);
    assert.deepEqual(kinds({ ...step, options: ['approve', 'reject', 'reject-with-guidance'] }), [
      'allow_once',
      'reject_once',
    ]);
    assert.deepEqual(kinds({ kind: 'apply', options: ['approve', 'always', 'reject'] }), ['allow_once', 'reject_once']);
  });

  it('answer "always allow" as an approval for this call and later ones like it; the rest once; cancelled as none', () => {
    const chose = (optionId: string): ReturnType<typeof planAnswerOf> =>
      planAnswerOf({ outcome: 'selected', optionId });
    assert.deepEqual(chose('allow_always'), { decision: 'approve', always: 'command' });
    assert.deepEqual(chose('allow_once'), { decision: 'approve' });
    assert.deepEqual(chose('reject_once'), { decision: 'reject' });
    // An option that was not offered is a rejection, never a silent approval.
    assert.deepEqual(chose('something-else'), { decision: 'reject' });
    assert.equal(planAnswerOf({ outcome: 'cancelled' }), undefined);
  });
});

describe('ACP diff content', () => {
  it('a diff per file with absolute paths and old/new texts; text where the old text is unknown or the hunks do not fit', () => {
    const olds: Record<string, string> = { '/r/src/a.js': 'one\ntwo\nthree\n' };
    const content = diffContent(diffFiles(MODIFIED + ADDED), '/r', (p) => olds[p]);
    assert.deepEqual(content, [
      { type: 'diff', path: '/r/src/a.js', oldText: 'one\ntwo\nthree\n', newText: 'one\nTWO\nthree\n' },
      { type: 'diff', path: '/r/new.txt', oldText: null, newText: 'hello\nworld\n' },
    ]);
    const unknown = diffContent(diffFiles(MODIFIED), '/r', () => undefined);
    assert.equal(unknown[0]?.type, 'content');
    assert.match(JSON.stringify(unknown[0]), /-two\\n\+TWO/);
    const misfit = diffContent(diffFiles(MODIFIED), '/r', () => 'one\nzwei\nthree\n');
    assert.equal(misfit[0]?.type, 'content', 'a file changed since is shown as its diff, never a wrong side');
    const noRoot = diffContent(diffFiles(ADDED), undefined, () => '');
    assert.equal(noRoot[0]?.type, 'content');
  });

  it('keeps a missing last newline: the new text ends without one', () => {
    const content = diffContent(diffFiles(NO_NEWLINE), '/r', () => 'x\n');
    assert.deepEqual(content, [{ type: 'diff', path: '/r/n.txt', oldText: 'x\n', newText: 'y' }]);
  });
});
