/** The egress allowlist of `agents serve`: flags, CLEVERAGENTS_ALLOW_EGRESS and its deprecated former name. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { egressSettings } from '../../../src/main/egress-config.ts';
import { StartupError } from '../../../src/main/startup-errors.ts';

describe('egressSettings', () => {
  it('merges the flags, CLEVERAGENTS_ALLOW_EGRESS and the deprecated CLEVERAGENTS_PUSH_ALLOW_HOSTS', () => {
    const s = egressSettings(['127.0.0.1:11434'], {
      CLEVERAGENTS_ALLOW_EGRESS: ' ollama.lan , [::1]:8080,',
      CLEVERAGENTS_PUSH_ALLOW_HOSTS: 'hooks.lan',
    });
    assert.deepEqual(s.entries, ['127.0.0.1:11434', 'ollama.lan', '[::1]:8080', 'hooks.lan']);
    assert.equal(s.deprecatedAlias, true);
    assert.equal(s.allowlist.allows('127.0.0.1', 11434), true);
    assert.equal(s.allowlist.allows('127.0.0.1', 80), false);
    assert.equal(s.allowlist.allows('hooks.lan', 443), true);
    assert.equal(s.allowlist.allows('::1', 8080), true);
  });

  it('is empty without settings, and says nothing of the deprecated name then', () => {
    const s = egressSettings(undefined, {});
    assert.equal(s.allowlist.size, 0);
    assert.equal(s.deprecatedAlias, false);
  });

  it('stops the start at a malformed entry, naming where it came from, with a hint', () => {
    const bad = (flags: string[], env: NodeJS.ProcessEnv, where: RegExp) =>
      assert.throws(
        () => egressSettings(flags, env),
        (err: unknown) =>
          err instanceof StartupError &&
          where.test(err.message) &&
          /--allow-egress 127\.0\.0\.1:11434/.test(err.hint ?? ''),
      );
    bad(['*.lan'], {}, /"\*\.lan" is not a host name .*\(from --allow-egress\)$/);
    bad(
      [],
      { CLEVERAGENTS_ALLOW_EGRESS: 'ok.lan,host:0' },
      /"host:0" has a port .*\(from CLEVERAGENTS_ALLOW_EGRESS\)$/,
    );
    bad([], { CLEVERAGENTS_PUSH_ALLOW_HOSTS: 'http://x/' }, /\(from CLEVERAGENTS_PUSH_ALLOW_HOSTS\)$/);
  });
});
