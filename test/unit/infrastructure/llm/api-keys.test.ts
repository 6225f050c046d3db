import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvFileApiKeys } from '../../../../src/infrastructure/index.ts';
import type { ActorDefinition } from '../../../../src/domain/registry/actor.definition.ts';

const actor = (over: Partial<ActorDefinition>): ActorDefinition => ({
  name: 'local/x',
  provider: 'openai',
  model: 'gpt-x',
  ...over,
});

describe('EnvFileApiKeys', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ca-keys-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const keyFile = async (name: string, content: string | Buffer, mode: number) => {
    const p = join(dir, name);
    await writeFile(p, content);
    await chmod(p, mode);
    return p;
  };

  it('reads the key from the variable apiKeyEnv names', async () => {
    const keys = new EnvFileApiKeys({ env: { OPENAI_API_KEY: '  sk-123\n' } });
    assert.deepEqual(await keys.resolve(actor({ apiKeyEnv: 'OPENAI_API_KEY' })), {
      present: true,
      key: 'sk-123',
      source: 'env OPENAI_API_KEY',
    });
  });

  it('an unset or empty variable is absent, naming it', async () => {
    for (const env of [{}, { OPENAI_API_KEY: '' }, { OPENAI_API_KEY: '  ' }]) {
      const keys = new EnvFileApiKeys({ env });
      assert.deepEqual(await keys.resolve(actor({ apiKeyEnv: 'OPENAI_API_KEY' })), {
        present: false,
        source: 'env OPENAI_API_KEY',
        problem: 'OPENAI_API_KEY is not set',
      });
    }
  });

  it('reads a 0600 (or 0400) key file, trimmed', async () => {
    const keys = new EnvFileApiKeys({ env: {} });
    for (const mode of [0o600, 0o400]) {
      const p = await keyFile(`ok-${mode.toString(8)}`, 'sk-file-key\n', mode);
      assert.deepEqual(await keys.resolve(actor({ apiKeyFile: p })), {
        present: true,
        key: 'sk-file-key',
        source: `file ${p}`,
      });
    }
  });

  it('refuses a key file others can read, saying chmod 600', async () => {
    const keys = new EnvFileApiKeys({ env: {} });
    for (const mode of [0o644, 0o640, 0o604]) {
      const p = await keyFile(`open-${mode.toString(8)}`, 'sk-leaky', mode);
      const r = await keys.resolve(actor({ apiKeyFile: p }));
      assert.equal(r.present, false);
      assert.ok(!r.present && r.problem.includes(`chmod 600 ${p}`), JSON.stringify(r));
      assert.ok(!JSON.stringify(r).includes('sk-leaky'));
    }
  });

  it('refuses a missing, empty, oversized or non-regular key file', async () => {
    const keys = new EnvFileApiKeys({ env: {} });
    const cases: Array<[string, RegExp]> = [
      [join(dir, 'missing'), /does not exist/],
      [await keyFile('empty', ' \n', 0o600), /is empty/],
      [await keyFile('big', Buffer.alloc(16 * 1024 + 1, 'a'), 0o600), /larger than 16 KiB/],
    ];
    const sub = join(dir, 'a-dir');
    await mkdir(sub, { mode: 0o700 });
    cases.push([sub, /not a regular file/]);
    for (const [p, problem] of cases) {
      const r = await keys.resolve(actor({ apiKeyFile: p }));
      assert.equal(r.present, false, p);
      assert.ok(!r.present && problem.test(r.problem), `${p}: ${JSON.stringify(r)}`);
      assert.equal(r.source, `file ${p}`);
    }
  });

  it('no apiKeyEnv, apiKeyFile or apiKeySecret: absent (a local server may need none)', async () => {
    const keys = new EnvFileApiKeys({ env: { OPENAI_API_KEY: 'sk-not-used' } });
    assert.deepEqual(await keys.resolve(actor({})), {
      present: false,
      problem: 'no apiKeyEnv, apiKeyFile or apiKeySecret',
    });
  });

  describe('apiKeySecret', () => {
    /** A lookup over a map of `namespace/name` → value, recording what it was asked. */
    const lookup = (values: Record<string, string>, asked: string[] = []) => ({
      asked,
      fn: (namespace: string, name: string) => {
        asked.push(`${namespace}/${name}`);
        return Promise.resolve(values[`${namespace}/${name}`]);
      },
    });

    it('reads the secret of the actor’s own namespace; the source names the secret, not the value', async () => {
      const l = lookup({ 'alice/openai': 'sk-from-secret', 'bob/openai': 'sk-bob' });
      const keys = new EnvFileApiKeys({ env: { OPENAI_API_KEY: 'sk-env' }, secret: l.fn });
      assert.deepEqual(await keys.resolve(actor({ name: 'alice/gpt', apiKeySecret: 'openai' })), {
        present: true,
        key: 'sk-from-secret',
        source: 'secret openai',
      });
      assert.deepEqual(l.asked, ['alice/openai']);
    });

    it('a missing secret is absent, saying which and how to set it', async () => {
      const keys = new EnvFileApiKeys({ env: {}, secret: lookup({ 'alice/openai': 'sk' }).fn });
      assert.deepEqual(await keys.resolve(actor({ name: 'bob/gpt', apiKeySecret: 'openai' })), {
        present: false,
        source: 'secret openai',
        problem: 'namespace bob has no secret openai (set it: agents secret set openai --namespace bob)',
      });
    });

    it('a secret that cannot be read is absent with the store’s reason', async () => {
      const keys = new EnvFileApiKeys({
        env: {},
        secret: () => Promise.reject(new Error('The secret openai of namespace alice does not decrypt; set it again')),
      });
      assert.deepEqual(await keys.resolve(actor({ name: 'alice/gpt', apiKeySecret: 'openai' })), {
        present: false,
        source: 'secret openai',
        problem: 'The secret openai of namespace alice does not decrypt; set it again',
      });
    });

    it('without a secret store, an actor naming a secret finds no key and is told why', async () => {
      const keys = new EnvFileApiKeys({ env: {} });
      assert.deepEqual(await keys.resolve(actor({ name: 'local/gpt', apiKeySecret: 'openai' })), {
        present: false,
        source: 'secret openai',
        problem: 'this agent keeps no secrets',
      });
    });
  });
});
