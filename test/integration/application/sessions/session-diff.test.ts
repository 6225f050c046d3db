/**
 * `session/diff` through the real agent (in-memory transport, SQLite, the shadow history on disk):
 * what a session's turns changed, undone turns left out, files changed outside the agent marked.
 * As in turn-history.test.ts, the tests play the agent loop's `before` and `after` around writes.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { App } from '../../../../src/main/app.ts';
import {
  A2AClient,
  A2AClientError,
  sendMessage,
  sessionCreate,
  sessionDiff,
  sessionUndo,
  type Session,
} from '../../../../src/protocol/client/index.ts';
import { memoryApp, type MemoryApp } from '../../../support/memory-app.ts';
import { userMessage } from '../../../../src/presentation/cli/support/message.ts';

describe("a session's diff", () => {
  let app: App;
  let client: A2AClient;
  let bob: A2AClient;
  let data: string;
  let project: string;
  let session: Session;

  const write = (rel: string, content: string): void => {
    fs.mkdirSync(path.dirname(path.join(project, rel)), { recursive: true });
    fs.writeFileSync(path.join(project, rel), content);
  };

  async function turn(writes: () => void): Promise<void> {
    const r = await client.call(sendMessage, { message: userMessage('do it', { contextId: session.id }) });
    const task = 'task' in r ? r.task : undefined;
    assert.ok(task, 'a task');
    const ref = { session: session.id, task: task.id, root: project };
    await app.facade.turnHistory.before(ref);
    writes();
    await app.facade.turnHistory.after(ref);
  }

  let m: MemoryApp;
  before(async () => {
    m = await memoryApp('ca-session-diff-');
    ({ app, client, bob, dir: data } = m);
  });
  after(() => m?.close());
  beforeEach(async () => {
    project = fs.mkdtempSync(path.join(data, 'project-'));
    session = await client.call(sessionCreate, {});
  });

  it('shows each file from before the first turn not undone that changed it to now, leaving the undone turn out', async () => {
    write('a.txt', 'one\ntwo\n');
    write('b.txt', 'b0\n');
    await turn(() => {
      write('a.txt', 'one\nTWO\n');
      write('new.txt', 'made\n');
    });
    await turn(() => {
      write('a.txt', 'one\nTWO\nthree\n');
      write('b.txt', 'b2\n');
    });
    await client.call(sessionUndo, { sessionId: session.id }); // turn 2: a.txt and b.txt back
    const d = await client.call(sessionDiff, { sessionId: session.id });
    assert.deepEqual(
      d.files.map((f) => [f.newPath ?? f.oldPath, f.status, f.turns, f.changedOutside]),
      [
        ['a.txt', 'modified', [1], false],
        ['new.txt', 'added', [1], false],
      ],
    );
    assert.match(
      d.unified,
      /^diff --git a\/a\.txt b\/a\.txt\n--- a\/a\.txt\n\+\+\+ b\/a\.txt\n@@ -1,2 \+1,2 @@\n one\n-two\n\+TWO\n/,
    );
    assert.match(
      d.unified,
      /new file mode 100644\n--- \/dev\/null\n\+\+\+ b\/new\.txt\n@@ -[01],0 \+1(,1)? @@\n\+made\n/,
    );
    assert.doesNotMatch(d.unified, /b\.txt|three/, 'the undone turn is not shown');
  });

  it("marks a file changed outside the agent since and shows it as it is now; one turn's diff is its own change", async () => {
    write('a.txt', 'a0\n');
    await turn(() => write('a.txt', 'a1\n'));
    await turn(() => write('c.txt', 'c2\n'));
    write('a.txt', 'the user edited this\n');
    const d = await client.call(sessionDiff, { sessionId: session.id });
    const a = d.files.find((f) => f.newPath === 'a.txt');
    assert.equal(a?.changedOutside, true);
    assert.deepEqual(
      a?.hunks.flatMap((h) => h.lines.map((l) => `${l.kind}${l.text}`)),
      ['-a0', '+the user edited this'],
    );
    assert.equal(d.files.find((f) => f.newPath === 'c.txt')?.changedOutside, false);

    const one = await client.call(sessionDiff, { sessionId: session.id, turn: 1 });
    assert.equal(one.turn, 1);
    assert.deepEqual(
      one.files.map((f) => [f.newPath, f.hunks.flatMap((h) => h.lines.map((l) => `${l.kind}${l.text}`))]),
      [['a.txt', ['-a0', '+a1']]],
    );
  });

  it('refuses an undone turn, a turn the session does not have, and another user', async () => {
    write('a.txt', 'a0\n');
    await turn(() => write('a.txt', 'a1\n'));
    await client.call(sessionUndo, { sessionId: session.id });
    const refused = async (p: Promise<unknown>, code: number, re: RegExp): Promise<void> => {
      await assert.rejects(p, (e: unknown) => {
        assert.ok(e instanceof A2AClientError, String(e));
        assert.equal(e.code, code);
        assert.match(e.message, re);
        return true;
      });
    };
    await refused(client.call(sessionDiff, { sessionId: session.id, turn: 1 }), -32004, /Turn 1 .* was undone/);
    await refused(client.call(sessionDiff, { sessionId: session.id, turn: 5 }), -32001, /has no turn 5/);
    await refused(bob.call(sessionDiff, { sessionId: session.id }), -32001, /was not found/);
    assert.deepEqual((await client.call(sessionDiff, { sessionId: session.id })).files, []);
  });
});
