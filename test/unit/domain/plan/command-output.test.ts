import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { outputTail, shownOutput } from '../../../../src/domain/plan/command-output.ts';

const numbered = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n');

describe('a command output’s tail', () => {
  it('keeps the last lines and counts the ones before them', () => {
    const tail = outputTail(`${numbered(57)}\n`);
    assert.equal(tail.text, numbered(57).split('\n').slice(-20).join('\n'));
    assert.equal(tail.omittedLines, 37);
  });

  it('is the whole output when it is short, and empty for no output', () => {
    assert.deepEqual(outputTail('out\nerr\n'), { text: 'out\nerr', omittedLines: 0 });
    assert.deepEqual(outputTail(''), { text: '', omittedLines: 0 });
    assert.deepEqual(outputTail('\n'), { text: '', omittedLines: 0 });
  });

  it('shows what a terminal would: the last redraw of a line, no escape sequences or control characters', () => {
    const text =
      'progress 10%\rprogress 50%\rprogress 100%\r\n\u001b[31mFAIL\u001b[0m src/a.test.ts\n\u001b]0;title\u0007bell\u0007 done\r\n';
    assert.deepEqual(outputTail(text), { text: 'progress 100%\nFAIL src/a.test.ts\nbell done', omittedLines: 0 });
    assert.equal(shownOutput('a\u001b[2Jb\u0000c\r\nd'), 'abc\nd');
  });

  it('keeps the end of a line too long to show, within its character budget', () => {
    const tail = outputTail(`first\n${'x'.repeat(10_000)}END`, 20, 100);
    assert.equal(tail.text.length, 100);
    assert.ok(tail.text.startsWith('…') && tail.text.endsWith('xEND'), tail.text);
    assert.equal(tail.omittedLines, 1, 'no room was left for the line before');
  });
});
