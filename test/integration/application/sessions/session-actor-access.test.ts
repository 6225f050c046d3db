/**
 * A session's actor is one its owner may read: naming another namespace's actor (whose definition
 * may name that namespace's secrets) is answered as if it did not exist, and nothing is stored.
 * The built-in actors and the server's default actor stay open to everyone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LOCAL_PRINCIPAL } from '../../../../src/application/index.ts';
import type { App } from '../../../../src/main/app.ts';
import { BOB, memoryApp, SECRETIVE_ACTOR, type MemoryApp } from '../../../support/memory-app.ts';
const reasonOf = (err: unknown): string | undefined => (err as { reason?: string }).reason;

describe("a session with another namespace's actor", () => {
  let m: MemoryApp;
  let app: App;
  before(async () => {
    m = await memoryApp('ca-actor-access-');
    app = m.app;
    await app.facade.registry.add('actor', { definition: SECRETIVE_ACTOR }, LOCAL_PRINCIPAL);
  });
  after(() => m?.close());

  it('is refused as not found to a user who cannot read it, and no session is stored', async () => {
    await assert.rejects(app.facade.sessions.create({ actor: 'local/secretive' }, BOB), (err: unknown) => {
      assert.equal(reasonOf(err), 'NOT_FOUND');
      assert.match(String((err as Error).message), /local\/secretive/);
      return true;
    });
    assert.equal((await app.facade.sessions.list(BOB, 10)).totalSize, 0);
  });

  it("is the owner's to use, and the built-in and default actors are everyone's", async () => {
    assert.equal(
      (await app.facade.sessions.create({ actor: 'local/secretive' }, LOCAL_PRINCIPAL)).actor,
      'local/secretive',
    );
    assert.equal((await app.facade.sessions.create({ actor: 'builtin/echo' }, BOB)).actor, 'builtin/echo');
    assert.ok((await app.facade.sessions.create({}, BOB)).actor);
  });
});
