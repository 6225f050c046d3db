/**
 * `session/update`: the next turns of a session use the actor it is switched to, with the checks of
 * `session/create` — another namespace's actor is answered as a missing one (listing the caller's
 * actors), and only the owner may change the session.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LOCAL_PRINCIPAL } from '../../../../src/application/index.ts';
import type { App } from '../../../../src/main/app.ts';
import { sendMessage } from '../../../../src/protocol/client/index.ts';
import { BOB, memoryApp, SECRETIVE_ACTOR, type MemoryApp } from '../../../support/memory-app.ts';
const failure = (err: unknown) => err as { reason?: string; message?: string; hint?: string };

describe('switching the actor of a session', () => {
  let m: MemoryApp;
  let app: App;
  before(async () => {
    m = await memoryApp('ca-session-update-');
    app = m.app;
    await app.facade.registry.add('actor', { definition: SECRETIVE_ACTOR }, LOCAL_PRINCIPAL);
  });
  after(() => m?.close());

  it('makes the next turn answer with the new actor, and keeps it', async () => {
    const s = await app.facade.sessions.create({ actor: 'builtin/echo' }, LOCAL_PRINCIPAL);
    const updated = await app.facade.sessions.update(s.id, { actor: 'builtin/conformance' }, LOCAL_PRINCIPAL);
    assert.equal(updated.actor, 'builtin/conformance');
    assert.equal((await app.facade.sessions.get(s.id, LOCAL_PRINCIPAL)).actor, 'builtin/conformance');
    const { client } = m;
    // The conformance actor rejects a tck-reject-task message; the echo actor would answer it.
    const r = await client.call(sendMessage, {
      message: { messageId: 'tck-reject-task-1', role: 'ROLE_USER', parts: [{ text: 'hi' }], contextId: s.id },
    });
    assert.ok('task' in r, 'a task');
    assert.equal(r.task.status.state, 'TASK_STATE_REJECTED');
  });

  it("refuses another namespace's actor as not found, naming the caller's actors, and changes nothing", async () => {
    const s = await app.facade.sessions.create({ actor: 'builtin/echo' }, BOB);
    await assert.rejects(app.facade.sessions.update(s.id, { actor: 'local/secretive' }, BOB), (err: unknown) => {
      assert.equal(failure(err).reason, 'NOT_FOUND');
      assert.equal(failure(err).message, 'No actor named local/secretive');
      assert.match(failure(err).hint ?? '', /^available actors: builtin\/echo/);
      assert.doesNotMatch(failure(err).hint ?? '', /secretive/);
      return true;
    });
    await assert.rejects(app.facade.sessions.update(s.id, { actor: 'local/none' }, BOB), /No actor named local\/none/);
    assert.equal((await app.facade.sessions.get(s.id, BOB)).actor, 'builtin/echo');
    // The owner of the actor may switch to it.
    const mine = await app.facade.sessions.create({}, LOCAL_PRINCIPAL);
    assert.equal(
      (await app.facade.sessions.update(mine.id, { actor: 'local/secretive' }, LOCAL_PRINCIPAL)).actor,
      'local/secretive',
    );
  });

  it("refuses someone else's session as not found, and an update that changes nothing", async () => {
    const s = await app.facade.sessions.create({ actor: 'builtin/echo' }, LOCAL_PRINCIPAL);
    await assert.rejects(app.facade.sessions.update(s.id, { actor: 'builtin/conformance' }, BOB), (err: unknown) => {
      assert.equal(failure(err).reason, 'NOT_FOUND');
      assert.match(failure(err).message ?? '', /Session .* was not found/);
      return true;
    });
    assert.equal((await app.facade.sessions.get(s.id, LOCAL_PRINCIPAL)).actor, 'builtin/echo');
    await assert.rejects(app.facade.sessions.update(s.id, {}, LOCAL_PRINCIPAL), /Nothing to update/);
  });

  it('replaces the skills and the context mode, and clears the skills with an empty list', async () => {
    const s = await app.facade.sessions.create({ actor: 'builtin/echo' }, LOCAL_PRINCIPAL);
    const full = await app.facade.sessions.update(s.id, { context: 'full' }, LOCAL_PRINCIPAL);
    assert.equal(full.context, 'full');
    await assert.rejects(app.facade.sessions.update(s.id, { skills: ['local/nope'] }, LOCAL_PRINCIPAL), /nope/);
    const cleared = await app.facade.sessions.update(s.id, { skills: [] }, LOCAL_PRINCIPAL);
    assert.equal(cleared.skills, undefined);
    const stored = await app.facade.sessions.get(s.id, LOCAL_PRINCIPAL);
    assert.deepEqual([stored.context, stored.skills], ['full', undefined]);
  });
});
