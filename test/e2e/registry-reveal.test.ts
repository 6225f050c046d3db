/**
 * Over the protocol, a definition's credential values are hidden from whoever reads it (a
 * namespace's viewer, a member, a raw JSON-RPC client), and shown with `reveal` only to those who
 * may write its namespace — what `agents sync` needs to copy definitions whole (issue #39).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTeamServer, type Caller, type TeamServer } from '../support/team-server.ts';

const HOOK = {
  name: 'team/notify',
  event: 'after-apply',
  webhook: { url: 'https://hooks.example.com/x?sig=qSECRET', headers: { 'X-Token': 'whSECRET' } },
};
type Shown = { definition: { webhook: { url: string; headers: Record<string, string> } } };

describe('registry answers hide credentials unless a writer asks to reveal them', () => {
  let server: TeamServer;
  let alice: Caller;
  let carol: Caller;

  before(async () => {
    server = await startTeamServer();
    alice = server.as(await server.addUser(server.adminToken, 'alice'));
    carol = server.as(await server.addUser(server.adminToken, 'carol'));
    await alice.ok('_cleveragents/namespace/create', { name: 'team' });
    await alice.ok('_cleveragents/namespace/add-member', { namespace: 'team', user: 'carol', role: 'viewer' });
    const added = await alice.ok<Shown>('_cleveragents/registry/hooks/add', { definition: HOOK });
    assert.equal(added.definition.webhook.headers['X-Token'], '[redacted]');
  });
  after(() => server.close());

  const show = (who: Caller, reveal?: boolean) =>
    who.ok<Shown>('_cleveragents/registry/hooks/show', { name: 'team/notify', ...(reveal ? { reveal } : {}) });
  const listed = async (who: Caller, reveal?: boolean) =>
    (
      await who.ok<{ items: Shown[] }>('_cleveragents/registry/hooks/list', {
        namespace: 'team',
        ...(reveal ? { reveal } : {}),
      })
    ).items[0];

  it('show and list hide the values from everyone who does not ask', async () => {
    for (const who of [alice, carol]) {
      for (const e of [await show(who), await listed(who)]) {
        assert.equal(e?.definition.webhook.headers['X-Token'], '[redacted]');
        assert.equal(e?.definition.webhook.url, 'https://hooks.example.com/x?sig=[redacted]');
      }
    }
  });

  it('a viewer asking to reveal still sees them hidden; the namespace owner sees them', async () => {
    for (const e of [await show(carol, true), await listed(carol, true)])
      assert.equal(e?.definition.webhook.headers['X-Token'], '[redacted]');
    for (const e of [await show(alice, true), await listed(alice, true)]) {
      assert.equal(e?.definition.webhook.headers['X-Token'], 'whSECRET');
      assert.equal(e?.definition.webhook.url, HOOK.webhook.url);
    }
  });
});
