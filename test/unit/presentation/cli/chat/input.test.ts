/** The chat's input: lines joined into messages, and the history file. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  HISTORY_LINES,
  historyPath,
  LineJoiner,
  loadHistory,
  saveHistory,
} from '../../../../../src/presentation/cli/chat/input.ts';

describe('LineJoiner', () => {
  it('continues a line that ends in \\ and sends the joined message on the next plain line', () => {
    const j = new LineJoiner();
    assert.equal(j.push('first \\'), undefined);
    assert.equal(j.continuing, true);
    assert.equal(j.push('second\\'), undefined);
    assert.equal(j.push('third'), 'first \nsecond\nthird');
    assert.equal(j.continuing, false);
  });

  it('keeps an escaped \\\\ at the end as the end of a message', () => {
    assert.equal(new LineJoiner().push('C:\\\\'), 'C:\\\\');
  });

  it("holds a paste's lines, even one ending in \\, until the line typed after it", () => {
    const j = new LineJoiner();
    assert.equal(j.push('a', true), undefined);
    assert.equal(j.push('b \\', true), undefined);
    assert.equal(j.push('c'), 'a\nb \\\nc');
  });

  it('drops a begun message on reset', () => {
    const j = new LineJoiner();
    j.push('half \\');
    j.reset();
    assert.equal(j.push('whole'), 'whole');
  });
});

describe('chat history', () => {
  it('lives beside config.yaml', () => {
    assert.equal(historyPath({ XDG_CONFIG_HOME: '/x/cfg' }), '/x/cfg/cleveragents/chat_history');
  });

  it('is kept oldest first, readable by its owner only, at most 1,000 lines, and read back newest first', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ca-history-'));
    try {
      const file = join(dir, 'sub', 'chat_history');
      assert.deepEqual(loadHistory(file), []);
      const newestFirst = Array.from({ length: HISTORY_LINES + 10 }, (_, i) => `line ${HISTORY_LINES + 9 - i}`);
      saveHistory(file, newestFirst);
      const stored = readFileSync(file, 'utf8').split('\n');
      assert.equal(stored[0], 'line 10');
      assert.equal(stored.at(-2), `line ${HISTORY_LINES + 9}`);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const back = loadHistory(file);
      assert.equal(back.length, HISTORY_LINES);
      assert.equal(back[0], `line ${HISTORY_LINES + 9}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
