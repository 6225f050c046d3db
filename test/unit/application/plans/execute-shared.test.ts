/** What a plan's tool-call record keeps of a command's output (keptOutput, for every path that records calls). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KEPT_OUTPUT_BYTES, type ToolCallResult } from '../../../../src/application/index.ts';
import { keptOutput } from '../../../../src/application/plans/execute-shared.ts';

const command = (over: Partial<ToolCallResult>): ToolCallResult => ({
  ok: false,
  summary: 'sh: exit 3',
  output: 'head and tail for the model',
  filesTouched: [],
  exitCode: 3,
  confinement: 'confined',
  ...over,
});

describe('keptOutput', () => {
  it('keeps the whole output the tool runner kept, rather than what the model is given', () => {
    const whole = { text: 'all of it\n', bytes: 10, truncated: false };
    assert.deepEqual(keptOutput(command({ commandOutput: whole })), whole);
  });

  it('keeps a command’s output when the runner kept none apart (its bytes counted)', () => {
    assert.deepEqual(keptOutput(command({ output: 'out\nérr\n' })), { text: 'out\nérr\n', bytes: 9, truncated: false });
    assert.deepEqual(keptOutput(command({ exitCode: null, confinement: undefined, output: 'killed' })), {
      text: 'killed',
      bytes: 6,
      truncated: false,
    });
  });

  it('keeps nothing for a tool that ran no command; an empty output for a command that wrote nothing', () => {
    assert.equal(keptOutput({ ok: true, summary: 'read a.txt', output: 'the file', filesTouched: [] }), undefined);
    assert.deepEqual(keptOutput(command({ output: '' })), { text: '', bytes: 0, truncated: false });
  });

  it('cuts an output over the limit in the middle, at character boundaries, saying how much', () => {
    const text = `${'é'.repeat(KEPT_OUTPUT_BYTES)}THE END`;
    const kept = keptOutput(command({ commandOutput: { text, bytes: Buffer.byteLength(text), truncated: false } }));
    assert.ok(kept);
    assert.ok(Buffer.byteLength(kept.text) <= KEPT_OUTPUT_BYTES, `${Buffer.byteLength(kept.text)} bytes`);
    assert.equal(kept.bytes, Buffer.byteLength(text), 'what the command wrote in all');
    assert.equal(kept.truncated, true);
    assert.match(kept.text, /^é+\n\[… \d+ bytes of output cut …\]\né+THE END$/);
    assert.ok(!kept.text.includes('\uFFFD'), 'no character cut in two');
  });
});
