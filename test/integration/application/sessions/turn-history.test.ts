/**
 * The undo of chat turns through the real agent (in-memory transport, SQLite storage, the shadow
 * history on disk). Until the agent loop calls them, the tests play the loop: `before` and `after`
 * around the writes a turn would make.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { BOB, memoryApp, type MemoryApp } from '../../../support/memory-app.ts';
import type { App } from '../../../../src/main/app.ts';
import {
  A2AClient,
  A2AClientError,
  sendMessage,
  sessionCreate,
  sessionDelete,
  sessionShow,
  sessionUndo,
  type Session,
} from '../../../../src/protocol/client/index.ts';
import { userMessage } from '../../../../src/presentation/cli/support/message.ts';

/** Every file of a directory, byte for byte (names, modes, contents). */
function fingerprint(dir: string): string {
  const h = createHash('sha256');
  const walk = (rel: string): void => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = fs.lstatSync(path.join(dir, r));
      h.update(`${r}\0${st.mode}\0`);
      if (st.isDirectory()) walk(r);
      else h.update(fs.readFileSync(path.join(dir, r)));
    }
  };
  walk('');
  return h.digest('hex');
}

const rpcError = async (p: Promise<unknown>, code: number, re: RegExp): Promise<A2AClientError> => {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof A2AClientError, String(e));
    assert.equal(e.code, code, e.message);
    assert.match(e.message, re);
    return e;
  }
  assert.fail('expected an error');
};

describe('undo of chat turns', () => {
  let app: App;
  let client: A2AClient;
  let bob: A2AClient;
  let data: string;
  let project: string;
  let session: Session;

  const write = (rel: string, content: string | Buffer): void => {
    fs.mkdirSync(path.dirname(path.join(project, rel)), { recursive: true });
    fs.writeFileSync(path.join(project, rel), content);
  };
  const read = (rel: string): string => fs.readFileSync(path.join(project, rel), 'utf8');

  /** A finished turn of the session (the echo actor answers), with `writes` done as the loop would. */
  async function turn(writes?: () => void): Promise<string> {
    const r = await client.call(sendMessage, { message: userMessage('do it', { contextId: session.id }) });
    const task = 'task' in r ? r.task : undefined;
    assert.ok(task, 'a task');
    if (writes) {
      const ref = { session: session.id, task: task.id, root: project };
      await app.facade.turnHistory.before(ref);
      await app.facade.turnHistory.before(ref); // a second write of the turn: nothing new
      writes();
      await app.facade.turnHistory.after(ref);
    }
    return task.id;
  }

  let m: MemoryApp;
  before(async () => {
    m = await memoryApp('ca-undo-');
    ({ app, client, bob, dir: data } = m);
  });
  after(() => m?.close());
  beforeEach(async () => {
    project = fs.mkdtempSync(path.join(data, 'project-'));
    session = await client.call(sessionCreate, {});
  });

  it('lists which turns changed which files, and undoes the newest, then the one before, byte for byte', async () => {
    write('a.txt', 'original\n');
    write('b.bin', Buffer.from([0, 1, 2, 255, 13, 10]));
    write('keep/c.txt', 'c\n');
    const start = fingerprint(project);
    const t1 = await turn(() => {
      write('a.txt', 'turn 1\n');
      write('new/made.txt', 'made by turn 1\n');
    });
    await turn(); // a turn that writes nothing
    const t3 = await turn(() => {
      write('a.txt', 'turn 3\n');
      fs.rmSync(path.join(project, 'b.bin'));
    });
    const afterTurns = fingerprint(project);

    const shown = await client.call(sessionShow, { sessionId: session.id, turns: 2 });
    assert.equal(shown.firstTurn, 2);
    assert.deepEqual(shown.changes, [
      { turn: 1, taskId: t1, files: ['a.txt', 'new/made.txt'], undone: false },
      { turn: 3, taskId: t3, files: ['a.txt', 'b.bin'], undone: false },
    ]);

    const u3 = await client.call(sessionUndo, { sessionId: session.id });
    assert.deepEqual(
      u3.turns.map((t) => t.turn),
      [3],
    );
    assert.deepEqual(u3.files, ['a.txt', 'b.bin']);
    assert.equal(read('a.txt'), 'turn 1\n');
    assert.deepEqual(fs.readFileSync(path.join(project, 'b.bin')), Buffer.from([0, 1, 2, 255, 13, 10]));

    const u1 = await client.call(sessionUndo, { sessionId: session.id });
    assert.deepEqual(
      u1.turns.map((t) => t.turn),
      [1],
    );
    assert.equal(fingerprint(project), start, 'every file as before turn 1, the made file and its directory gone');
    assert.notEqual(afterTurns, start);

    const changes = (await client.call(sessionShow, { sessionId: session.id })).changes ?? [];
    assert.deepEqual(
      changes.map((c) => [c.turn, c.undone, typeof c.undoneAt]),
      [
        [1, true, 'string'],
        [3, true, 'string'],
      ],
    );
    await rpcError(client.call(sessionUndo, { sessionId: session.id }), -32004, /no turn left to undo/);
  });

  it('--turn N undoes that turn and every later one, each file back to before the first turn that wrote it', async () => {
    write('a.txt', 'a0\n');
    write('b.txt', 'b0\n');
    await turn(() => write('a.txt', 'a1\n'));
    await turn(() => write('b.txt', 'b2\n'));
    await turn(() => {
      write('a.txt', 'a3\n');
      write('b.txt', 'b3\n');
    });
    const r = await client.call(sessionUndo, { sessionId: session.id, turn: 2 });
    assert.deepEqual(
      r.turns.map((t) => t.turn),
      [2, 3],
    );
    assert.equal(read('a.txt'), 'a1\n', 'turn 1 stays');
    assert.equal(read('b.txt'), 'b0\n');
    await rpcError(client.call(sessionUndo, { sessionId: session.id, turn: 3 }), -32004, /already undone/);
    await rpcError(client.call(sessionUndo, { sessionId: session.id, turn: 9 }), -32001, /has no turn 9/);
  });

  it('refuses when a file was changed outside the agent since, naming it; --force overwrites it', async () => {
    write('a.txt', 'a0\n');
    write('b.txt', 'b0\n');
    await turn(() => {
      write('a.txt', 'a1\n');
      write('b.txt', 'b1\n');
    });
    write('b.txt', 'the user edited this\n');
    const err = await rpcError(
      client.call(sessionUndo, { sessionId: session.id }),
      -32004,
      /changed outside the agent since turn 1: b\.txt/,
    );
    assert.deepEqual((err.data as { files?: string[]; hint?: string }).files, ['b.txt']);
    assert.match((err.data as { hint?: string }).hint ?? '', /--force/);
    assert.equal(read('a.txt'), 'a1\n', 'nothing was put back');
    const forced = await client.call(sessionUndo, { sessionId: session.id, force: true });
    assert.deepEqual(forced.overwritten, ['b.txt']);
    assert.equal(read('a.txt'), 'a0\n');
    assert.equal(read('b.txt'), 'b0\n');
  });

  it('answers another user as if the session did not exist, and changes nothing', async () => {
    write('a.txt', 'a0\n');
    await turn(() => write('a.txt', 'a1\n'));
    await rpcError(bob.call(sessionUndo, { sessionId: session.id }), -32001, /was not found/);
    await assert.rejects(app.facade.turnHistory.changes(BOB, session.id), /was not found/);
    assert.equal(read('a.txt'), 'a1\n');
  });

  it('forgets the records with the session; refuses an after without a before', async () => {
    write('a.txt', 'a0\n');
    const t = await turn(() => write('a.txt', 'a1\n'));
    await client.call(sessionDelete, { sessionId: session.id });
    assert.deepEqual(await app.storage.turnChanges.listBySession(session.id), []);
    await assert.rejects(
      app.facade.turnHistory.after({ session: session.id, task: `${t}-other`, root: project }),
      /no checkpoint before the writes/,
    );
  });
});
