import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Task } from '../../../../../src/protocol/client/index.ts';
import { palette } from '../../../../../src/presentation/cli/render/colors.ts';
import { renderTask, usageLine, usageOf } from '../../../../../src/presentation/cli/render/task.render.ts';

const task = (usage: Record<string, unknown>): Task =>
  ({
    id: 't1',
    contextId: 'c1',
    status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-01-01T00:00:00Z' },
    metadata: { usage },
  }) as unknown as Task;

describe("a turn's usage line", () => {
  it('shows the prompt-cache reads and writes of the input when there were any', () => {
    const u = usageOf(
      task({ inputTokens: 1000, outputTokens: 7, cacheReadTokens: 800, cacheWriteTokens: 150, toolCalls: 2 }),
    );
    assert.ok(u);
    assert.equal(usageLine(u), '1000 in (800 cache read, 150 cache write) / 7 out tokens · 2 tool calls');
    assert.equal(
      usageLine({
        inputTokens: 1000,
        outputTokens: 7,
        cacheReadTokens: 640,
        cost: { amount: 0.0012, currency: 'USD' },
      }),
      '1000 in (640 cache read) / 7 out tokens · 0.0012 USD',
    );
  });

  it('stays as it was when nothing was cached or the endpoint reports no cache', () => {
    assert.equal(usageLine({ inputTokens: 12, outputTokens: 6 }), '12 in / 6 out tokens');
    assert.equal(
      usageLine({ inputTokens: 12, outputTokens: 6, cacheReadTokens: 0, cacheWriteTokens: 0 }),
      '12 in / 6 out tokens',
    );
  });

  it('is a field of `task get`', () => {
    const t = task({ inputTokens: 1000, outputTokens: 7, cacheReadTokens: 800 });
    assert.match(
      renderTask(t, { rich: false, pal: palette(false) }),
      /^usage: 1000 in \(800 cache read\) \/ 7 out tokens$/m,
    );
    assert.match(
      renderTask(t, { rich: true, pal: palette(false) }),
      /usage +1000 in \(800 cache read\) \/ 7 out tokens/,
    );
  });
});
