import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiKeyFix } from '../../../../../src/application/actors/llm/api-key-fix.ts';

describe('the fix for a missing API key', () => {
  const def = { name: 'local/gpt', apiKeyEnv: 'FAKE_API_KEY' };

  it('in local mode names the environment agents runs in, not a server that is not there', () => {
    const fix = apiKeyFix(def, { mode: 'local' });
    assert.equal(fix, 'set FAKE_API_KEY in the environment you run `agents` in');
    assert.doesNotMatch(fix, /server/);
  });

  it('on a server names the server process', () => {
    assert.equal(
      apiKeyFix(def, { mode: 'server' }),
      'set FAKE_API_KEY in the environment of the agent (the server process)',
    );
  });

  it('names the secret command for a key kept as a secret', () => {
    assert.equal(
      apiKeyFix({ name: 'team/gpt', apiKeySecret: 'openai' }, { mode: 'local' }),
      'set the secret: agents secret set openai --namespace team',
    );
  });
});
