import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chunkText, ECHO_FIRST_TURN_HINT, EchoActor } from '../../../../src/application/actors/echo.actor.ts';
import type { ActorTurn } from '../../../../src/application/ports/actor.port.ts';
import type { Message, Task } from '../../../../src/domain/a2a.model.ts';

describe('chunkText', () => {
  it('splits on word boundaries and loses nothing', () => {
    const text = 'the quick brown fox jumps over the lazy dog';
    const chunks = chunkText(text, 4);
    assert.ok(chunks.length >= 3 && chunks.length <= 5);
    assert.equal(chunks.join(''), text);
    assert.deepEqual(chunkText('', 4), ['']);
  });
});

/** A turn that records what the actor streamed. */
function turnOf(opensSession: boolean | undefined, isFollowUp = false): { turn: ActorTurn; text(): string } {
  const chunks: string[] = [];
  const turn = {
    task: { id: 't1', contextId: 'c1', status: { state: 'TASK_STATE_SUBMITTED' } } as unknown as Task,
    message: { messageId: 'm-t1', role: 'ROLE_USER', parts: [{ text: 'hello' }] } as unknown as Message,
    isFollowUp,
    ...(opensSession !== undefined ? { opensSession } : {}),
    signal: new AbortController().signal,
    aborted: false,
    status: async () => undefined,
    artifact: async (a: { parts: Array<{ text?: string }> }) => void chunks.push(a.parts[0]?.text ?? ''),
    stored: async () => undefined,
  } as unknown as ActorTurn;
  return { turn, text: () => chunks.join('') };
}

describe('EchoActor', () => {
  it("says how to connect a model in a session's first answer", async () => {
    const { turn, text } = turnOf(true);
    await new EchoActor().handle(turn);
    assert.equal(text(), `You said: hello${ECHO_FIRST_TURN_HINT}`);
    assert.match(ECHO_FIRST_TURN_HINT, /agents init/);
  });

  it('says it once per session: a later turn, or a follow-up, only restates', async () => {
    for (const [opens, followUp] of [
      [false, false],
      [undefined, false],
      [true, true],
    ] as const) {
      const { turn, text } = turnOf(opens, followUp);
      await new EchoActor().handle(turn);
      assert.equal(text(), 'You said: hello', `opensSession ${String(opens)}, follow-up ${followUp}`);
    }
  });
});
