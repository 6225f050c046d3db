/** The secret service with fakes for its ports: who may set, list and remove, and what is never shown. */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { AuditEntry } from '../../../../src/application/accounts/audit.service.ts';
import { makePrincipal, type Principal } from '../../../../src/application/ports/principal.ts';
import {
  SecretUnreadable,
  type SecretCipher,
  type SecretStore,
  type StoredSecret,
} from '../../../../src/application/ports/secret-store.port.ts';
import { SecretService } from '../../../../src/application/secrets/secret.service.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import { MAX_SECRET_BYTES, MAX_SECRETS_PER_NAMESPACE } from '../../../../src/domain/secrets.ts';

const AT = '2026-03-01T10:00:00.000Z';
const NAMESPACES = new Set(['alice', 'team', 'local']);

/** Rows in a map; a namespace not in NAMESPACES is refused as the foreign key would. */
class FakeStore implements SecretStore {
  readonly rows = new Map<string, StoredSecret>();
  put(s: StoredSecret) {
    if (!NAMESPACES.has(s.namespace))
      return Promise.reject(new AppError('NOT_FOUND', `Namespace ${s.namespace} was not found`));
    const key = `${s.namespace}/${s.name}`;
    const prior = this.rows.get(key);
    this.rows.set(key, prior ? { ...prior, ciphertext: s.ciphertext, updatedAt: s.updatedAt } : s);
    return Promise.resolve(
      prior
        ? { created: false, createdAt: prior.createdAt, createdBy: prior.createdBy }
        : { created: true, createdAt: s.createdAt, createdBy: s.createdBy },
    );
  }
  get(namespace: string, name: string) {
    return Promise.resolve(this.rows.get(`${namespace}/${name}`));
  }
  list(namespace: string) {
    return Promise.resolve(
      [...this.rows.values()]
        .filter((r) => r.namespace === namespace)
        .map(({ name, createdBy, createdAt, updatedAt }) => ({ name, createdBy, createdAt, updatedAt })),
    );
  }
  count(namespace: string) {
    return Promise.resolve([...this.rows.values()].filter((r) => r.namespace === namespace).length);
  }
  remove(namespace: string, name: string) {
    return Promise.resolve(this.rows.delete(`${namespace}/${name}`));
  }
}

/** Reversible and bound to its binding, like the real one (enough to see what the service asks for). */
const fakeCipher: SecretCipher = {
  seal: (value, binding) => Promise.resolve(`sealed:${binding}:${Buffer.from(value).toString('hex')}`),
  open: (text, binding) => {
    const [tag, b, hex] = text.split(':');
    if (tag !== 'sealed' || b !== binding) return Promise.reject(new SecretUnreadable('authentication'));
    return Promise.resolve(Buffer.from(hex ?? '', 'hex').toString());
  },
  ready: () => Promise.resolve(),
};

const alice: Principal = makePrincipal({ id: 'alice', roles: { alice: 'owner', team: 'viewer' } });
const bob: Principal = makePrincipal({ id: 'bob', roles: { bob: 'owner', team: 'member' } });

const refusal = (reason: string, message: string | RegExp) => (err: unknown) => {
  assert.ok(err instanceof AppError, String(err));
  assert.equal(err.reason, reason, err.message);
  if (typeof message === 'string') assert.equal(err.message, message);
  else assert.match(err.message, message);
  return true;
};

describe('SecretService', () => {
  let store: FakeStore;
  let audit: AuditEntry[];
  let secrets: SecretService;

  beforeEach(() => {
    store = new FakeStore();
    audit = [];
    secrets = new SecretService({
      store,
      cipher: fakeCipher,
      audit: { record: (e) => (audit.push(e), Promise.resolve()) },
      now: () => new Date(AT),
    });
  });

  it('sets a secret in the caller’s namespace (the request’s, when none is named), sealed with its binding', async () => {
    assert.deepEqual(await secrets.set({ name: 'openai', value: 'sk-1\n' }, alice), {
      namespace: 'alice',
      name: 'openai',
      created: true,
      updatedAt: AT,
    });
    const row = store.rows.get('alice/openai');
    assert.equal(row?.ciphertext, `sealed:alice/openai:${Buffer.from('sk-1').toString('hex')}`);
    assert.equal(row?.createdBy, 'alice');
    // One trailing newline (what echo adds) is dropped, nothing else.
    assert.equal(await secrets.reveal('alice', 'openai'), 'sk-1');
    await secrets.set({ name: 'pem', value: '  line 1\nline 2\n\n' }, alice);
    assert.equal(await secrets.reveal('alice', 'pem'), '  line 1\nline 2\n');
    await secrets.set({ name: 'crlf', value: 'k\r\n' }, alice);
    assert.equal(await secrets.reveal('alice', 'crlf'), 'k');
    // The tenant: where the dispatcher says the request acts.
    await secrets.set({ name: 'x', value: 'v' }, { ...bob, namespace: 'team' });
    assert.ok(store.rows.has('team/x'));
  });

  it('a second set replaces the value, keeps who created it, and says it was not created', async () => {
    await secrets.set({ namespace: 'team', name: 'k', value: 'one' }, bob);
    const again = await secrets.set({ namespace: 'team', name: 'k', value: 'two' }, bob);
    assert.equal(again.created, false);
    assert.equal(await secrets.reveal('team', 'k'), 'two');
    assert.equal(store.rows.get('team/k')?.createdBy, 'bob');
  });

  it('lists names with who and when, never a value; viewers may list', async () => {
    await secrets.set({ namespace: 'team', name: 'b', value: 'sk-b' }, bob);
    await secrets.set({ namespace: 'team', name: 'a', value: 'sk-a' }, bob);
    const listed = await secrets.list('team', alice);
    assert.equal(listed.namespace, 'team');
    assert.deepEqual(listed.secrets.map((s) => s.name).sort(), ['a', 'b']);
    assert.deepEqual(Object.keys(listed.secrets[0] ?? {}).sort(), ['createdAt', 'createdBy', 'name', 'updatedAt']);
    assert.ok(!JSON.stringify(listed).includes('sk-'));
    assert.deepEqual(await secrets.list('builtin', alice), { namespace: 'builtin', secrets: [] });
  });

  it('a viewer cannot set or remove; the refusal names the role', async () => {
    await assert.rejects(
      secrets.set({ namespace: 'team', name: 'k', value: 'v' }, alice),
      refusal('FORBIDDEN', 'You may not change the secrets of team: your role there is viewer'),
    );
    await secrets.set({ namespace: 'team', name: 'k', value: 'v' }, bob);
    await assert.rejects(
      secrets.remove({ namespace: 'team', name: 'k' }, alice),
      refusal('FORBIDDEN', /your role there is viewer/),
    );
    assert.ok(store.rows.has('team/k'));
  });

  it('a namespace the caller is not in looks exactly like one that does not exist', async () => {
    await secrets.set({ name: 'k', value: 'v' }, alice);
    const errors: string[] = [];
    for (const ns of ['alice', 'nowhere'])
      for (const call of [
        () => secrets.list(ns, bob),
        () => secrets.set({ namespace: ns, name: 'k', value: 'v' }, bob),
        () => secrets.remove({ namespace: ns, name: 'k' }, bob),
      ])
        await assert.rejects(call(), (err) => {
          assert.ok(err instanceof AppError);
          assert.equal(err.reason, 'NOT_FOUND');
          errors.push(
            JSON.stringify({ m: err.message.replace(ns, '<ns>'), d: { ...err.details, name: '' }, h: err.hint }),
          );
          return true;
        });
    assert.deepEqual(errors.slice(0, 3), errors.slice(3));
    assert.equal(await secrets.reveal('alice', 'k'), 'v', 'alice’s secret is untouched');
  });

  it('builtin has no secrets and takes none', async () => {
    await assert.rejects(
      secrets.set({ namespace: 'builtin', name: 'k', value: 'v' }, alice),
      refusal('FORBIDDEN', /builtin\/ has no secrets/),
    );
  });

  it('refuses an empty value or one over 16 KiB, never quoting it', async () => {
    for (const value of ['\n', '\r\n', 'x'.repeat(MAX_SECRET_BYTES + 1), 'é'.repeat(MAX_SECRET_BYTES / 2 + 1)])
      await assert.rejects(secrets.set({ name: 'k', value }, alice), (err) => {
        assert.ok(err instanceof AppError);
        assert.equal(err.reason, 'INVALID_PARAMS');
        assert.deepEqual(
          err.fields.map((f) => f.field),
          ['value'],
        );
        assert.ok(!err.message.includes('xxxx') && !err.message.includes('éé'));
        return true;
      });
    // Exactly 16 KiB, plus the newline echo adds, is fine.
    await secrets.set({ name: 'k', value: `${'x'.repeat(MAX_SECRET_BYTES)}\n` }, alice);
    assert.equal(store.rows.size, 1);
  });

  it(`refuses a new secret beyond ${MAX_SECRETS_PER_NAMESPACE} in a namespace, but still replaces one`, async () => {
    for (let i = 0; i < MAX_SECRETS_PER_NAMESPACE; i++)
      store.rows.set(`alice/s${i}`, {
        namespace: 'alice',
        name: `s${i}`,
        ciphertext: 'x',
        createdBy: 'alice',
        createdAt: AT,
        updatedAt: AT,
      });
    await assert.rejects(
      secrets.set({ name: 'one-more', value: 'v' }, alice),
      refusal('INVALID_STATE', `Namespace alice holds ${MAX_SECRETS_PER_NAMESPACE} secrets already`),
    );
    assert.equal((await secrets.set({ name: 's0', value: 'v' }, alice)).created, false);
  });

  it('removes a secret; removing one that is not there is NOT_FOUND with a hint', async () => {
    await secrets.set({ name: 'k', value: 'v' }, alice);
    assert.deepEqual(await secrets.remove({ name: 'k' }, alice), { namespace: 'alice', name: 'k', removed: true });
    assert.equal(await secrets.reveal('alice', 'k'), undefined);
    await assert.rejects(secrets.remove({ name: 'k' }, alice), (err) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.message, 'There is no secret k in namespace alice');
      assert.equal(err.hint, 'see its secrets with `agents secret list --namespace alice`');
      return true;
    });
  });

  it('audits set and remove with the name and namespace, never the value', async () => {
    await secrets.set({ name: 'k', value: 'sk-audit-me' }, alice);
    await secrets.set({ name: 'k', value: 'sk-audit-me-2' }, alice);
    await secrets.remove({ name: 'k' }, alice);
    assert.deepEqual(
      audit.map((e) => [e.event, e.namespace, e.target, e.by?.id, e.outcome, e.details]),
      [
        ['secret.set', 'alice', 'k', 'alice', 'ok', { created: true }],
        ['secret.set', 'alice', 'k', 'alice', 'ok', { created: false }],
        ['secret.removed', 'alice', 'k', 'alice', 'ok', undefined],
      ],
    );
    assert.ok(!JSON.stringify(audit).includes('sk-audit'));
  });

  it('a value that does not open is an error naming the secret and the fix', async () => {
    await secrets.set({ name: 'k', value: 'v' }, alice);
    // The row moved to another name: its binding no longer matches.
    const row = store.rows.get('alice/k');
    assert.ok(row);
    store.rows.set('alice/moved', { ...row, name: 'moved' });
    await assert.rejects(secrets.reveal('alice', 'moved'), (err) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.reason, 'INVALID_STATE');
      assert.equal(
        err.message,
        "The secret moved of namespace alice does not decrypt with this server's key (the key file was replaced, or this instance has another one than the instance that stored it); set it again: agents secret set moved --namespace alice",
      );
      assert.equal(err.hint, 'set it again: agents secret set moved --namespace alice');
      return true;
    });
    assert.equal(await secrets.reveal('alice', 'none'), undefined);
  });
});
