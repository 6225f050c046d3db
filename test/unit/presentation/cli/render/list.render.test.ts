import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { palette } from '../../../../../src/presentation/cli/render/colors.ts';
import {
  clip,
  planSummary,
  renderSessionList,
  shortIds,
  type SessionListItem,
} from '../../../../../src/presentation/cli/render/list.render.ts';

const pal = palette(false);

describe('list rendering', () => {
  it('shortens ids to the shortest prefix of at least 8 that no other listed id shares', () => {
    const ids = shortIds(['01JAAAAAAA000001', '01JAAAAAAA000002', '01JBBBBBBB000003']);
    assert.equal(ids.get('01JAAAAAAA000001'), '01JAAAAAAA000001');
    assert.equal(ids.get('01JAAAAAAA000002'), '01JAAAAAAA000002');
    assert.equal(ids.get('01JBBBBBBB000003'), '01JBBBBB');
    assert.equal(shortIds(['01JAAAAAAA1', '01JAAAAAAB2']).get('01JAAAAAAA1'), '01JAAAAAAA');
  });

  it('clips text to a width with an ellipsis, on one line', () => {
    assert.equal(clip('fix the\nparser now', 12), 'fix the\\npa…');
    assert.equal(clip('short', 12), 'short');
  });

  it('says what a plan does: its description, and the arguments it does not show', () => {
    assert.equal(
      planSummary({ name: 'p', description: 'Run `npm test` in the sandbox', arguments: { command: 'npm test' } }),
      'Run `npm test` in the sandbox',
    );
    assert.equal(
      planSummary({ name: 'p', description: 'Tidy up', arguments: { dry: true, n: 3 } }),
      'Tidy up (dry=true, n=3)',
    );
  });

  it('fits the list even when ids need more than 8 characters to tell apart', () => {
    const sessions: SessionListItem[] = [1, 2].map((n) => ({
      id: `01JSESSION0000000000000${n}`,
      owner: 'local',
      actor: 'echo',
      createdAt: '2026-03-01T10:00:00.000Z',
      updatedAt: '2026-03-01T10:00:00.000Z',
      taskCount: n,
      firstMessage: 'x'.repeat(200),
    }));
    for (const line of renderSessionList(sessions, { rich: true, pal, width: undefined }).trimEnd().split('\n'))
      assert.ok(line.length <= 80, `${line.length}: ${line}`);
  });

  it('fits a session list in 80 columns when the width is unknown, and uses a wider terminal', () => {
    const sessions: SessionListItem[] = [1, 2, 3].map((n) => ({
      id: `01JSES${n}SION00000000000000X`,
      owner: 'local',
      actor: 'echo',
      project: 'local/a-project-with-a-very-long-name',
      createdAt: '2026-03-01T10:00:00.000Z',
      updatedAt: '2026-03-01T10:00:00.000Z',
      taskCount: n,
      firstMessage: `message ${n}: ${'please do a long and careful thing '.repeat(5)}`,
    }));
    const narrow = renderSessionList(sessions, { rich: true, pal, width: undefined }).trimEnd().split('\n');
    assert.equal(narrow.length, 4);
    assert.equal(narrow.at(-1)?.length, 80);
    for (const line of narrow) assert.ok(line.length <= 80, `${line.length}: ${line}`);
    assert.match(narrow[1] ?? '', /^01JSES1S +local\/a-project… +1 +03-01 10:00 +message 1: .*…$/);
    const wide = renderSessionList(sessions, { rich: true, pal, width: 200 }).split('\n');
    assert.ok(wide.some((l) => l.length > 80));
    const plain = renderSessionList(sessions, { rich: false, pal, width: undefined }).split('\n');
    assert.equal(plain[0]?.split('\t')[0], '01JSES1SION00000000000000X');
  });
});
