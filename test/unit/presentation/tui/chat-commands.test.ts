/** The chat view's commands answer in the chat pane, as lines of the conversation never sent to the actor. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Session } from '../../../../src/protocol/client/index.ts';
import { helpLines } from '../../../../src/presentation/tui/HelpOverlay.tsx';
import { turnLines } from '../../../../src/presentation/tui/lines.ts';
import { initialState, reduce, type TuiState } from '../../../../src/presentation/tui/state.ts';

const session = (actor: string): Session =>
  ({ id: '01JSESSION0000000000000000', actor, createdAt: '', updatedAt: '' }) as unknown as Session;

const chat = (): TuiState => {
  let s = reduce(initialState(), { type: 'open-session', session: session('local/gpt'), recap: [] });
  s = reduce(s, { type: 'turn-start', turn: { key: 'turn-1', input: 'hello' } });
  return reduce(s, { type: 'streaming', on: false });
};

describe('tui chat commands in the chat pane', () => {
  it("adds a command's answer after the turns so far, shown under the command as typed", () => {
    const s = reduce(chat(), {
      type: 'system',
      answer: { command: '/cost', text: '1 turn · 12 in / 3 out tokens\n' },
    });
    assert.deepEqual(
      s.turns.map((t) => t.key),
      ['turn-1', 'system-1'],
    );
    const shown = s.turns.at(-1);
    assert.ok(shown);
    assert.deepEqual(turnLines(shown, 80), [
      { text: '› /cost', tone: 'meta' },
      { text: '  1 turn · 12 in / 3 out tokens', tone: 'meta' },
    ]);
    assert.equal(s.streaming, false, 'an answer is no turn: nothing streams');
  });

  it('colours a diff answer as a diff', () => {
    const s = reduce(chat(), {
      type: 'system',
      answer: { command: '/diff', text: '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n', diff: true },
    });
    const lines = turnLines(s.turns.at(-1) ?? { key: '', input: '' }, 80);
    assert.deepEqual(
      lines.slice(-2).map((l) => [l.text, l.tone]),
      [
        ['-old', 'del'],
        ['+new', 'add'],
      ],
    );
  });

  it('/model: the open session takes the new actor; another session is not touched', () => {
    const s = reduce(chat(), { type: 'session', session: session('local/coder') });
    assert.equal(s.session?.actor, 'local/coder');
    assert.equal(s.turns.length, 1, 'the conversation stays');
    const other = { ...session('local/other'), id: '01JOTHER00000000000000000' };
    assert.equal(reduce(s, { type: 'session', session: other }).session?.actor, 'local/coder');
  });

  it("the chat's help lists its commands, first", () => {
    const lines = helpLines('chat', 120).map((l) => l.text);
    const commands = lines.indexOf('Commands (type in the input line)');
    assert.match(lines[commands + 1] ?? '', /^ {2}\/undo \[turn\]/);
    const plan = helpLines('plan', 120).map((l) => l.text);
    assert.match(plan[plan.indexOf('Commands (type in the input line)') + 1] ?? '', /^ {2}\/execute/, "the plan's own");
    const list = helpLines('sessions', 120).map((l) => l.text);
    assert.match(
      list[list.indexOf('Commands (type in the input line)') + 1] ?? '',
      /^ {2}\/new /,
      'elsewhere, in order',
    );
    const text = lines.join('\n');
    for (const cmd of [
      '/model [actor]',
      '/undo [turn]',
      '/diff [turn]',
      '/compact [keep]',
      '/cost',
      '/clear',
      '/tools',
      '/context',
      '/exit',
    ])
      assert.ok(text.includes(cmd), `${cmd} in the help`);
  });
});
