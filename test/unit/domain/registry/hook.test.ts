import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  answerDecision,
  decideHook,
  HookDefinition,
  hookMatches,
  truncateBytes,
} from '../../../../src/domain/registry/hook.ts';

const cmd = { program: '/bin/true' };
const issues = (v: unknown): string[] => {
  const r = HookDefinition.safeParse(v);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('hook definitions', () => {
  it('accepts a command hook and a webhook hook, a bare name meaning local/', () => {
    const h = HookDefinition.parse({ name: 'guard', event: 'before-tool-call', tools: ['builtin/*'], command: cmd });
    assert.equal(h.name, 'local/guard');
    assert.deepEqual(issues({ name: 'n', event: 'after-apply', webhook: { url: 'https://example.com/h' } }), []);
  });

  it('refuses neither or both of command and webhook, tools on a non-tool event, a bad event, timeout and URL', () => {
    assert.deepEqual(issues({ name: 'n', event: 'before-apply' }), [
      'command: give exactly one of command (a program to run) or webhook (a URL to POST to)',
    ]);
    assert.deepEqual(
      issues({ name: 'n', event: 'plan-phase', tools: ['x'], command: cmd, webhook: { url: 'https://e.com' } }),
      [
        'command: give exactly one of command (a program to run) or webhook (a URL to POST to)',
        'tools: only before-tool-call and after-tool-call hooks take tools (this one is plan-phase)',
      ],
    );
    assert.deepEqual(issues({ name: 'n', event: 'on-save', command: cmd }), [
      'event: must be one of before-tool-call, after-tool-call, plan-phase, before-apply, after-apply',
    ]);
    assert.deepEqual(issues({ name: 'n', event: 'after-apply', command: cmd, timeoutSeconds: 0 }), [
      'timeoutSeconds: must be between 1 and 600',
    ]);
    assert.deepEqual(issues({ name: 'n', event: 'after-apply', webhook: { url: 'file:///etc/passwd' } }), [
      'webhook.url: must be an http:// or https:// URL',
    ]);
    assert.match(
      issues({ name: 'n', event: 'after-apply', command: { ...cmd, env: { 'BAD-NAME': 'x' } } }).join(),
      /^command\.env\.BAD-NAME: /,
    );
    assert.deepEqual(issues({ name: 'n', event: 'after-apply', command: cmd, colour: 'red' }).length, 1);
  });
});

describe('which hooks run', () => {
  const h = (extra: Partial<HookDefinition>): HookDefinition =>
    HookDefinition.parse({ name: 'local/h', event: 'before-tool-call', command: cmd, ...extra });

  it('matches by event', () => {
    assert.equal(hookMatches(h({}), { event: 'before-tool-call', projects: [], tool: 't/x' }), true);
    assert.equal(hookMatches(h({}), { event: 'after-tool-call', projects: [], tool: 't/x' }), false);
  });

  it('a global hook runs for every project and for none; a project hook only for its project', () => {
    assert.equal(hookMatches(h({}), { event: 'before-tool-call', projects: ['local/a'] }), true);
    const bound = h({ project: 'local/a' });
    assert.equal(hookMatches(bound, { event: 'before-tool-call', projects: ['local/a'] }), true);
    assert.equal(hookMatches(bound, { event: 'before-tool-call', projects: ['local/b', 'local/a'] }), true);
    assert.equal(hookMatches(bound, { event: 'before-tool-call', projects: ['local/b'] }), false);
    assert.equal(hookMatches(bound, { event: 'before-tool-call', projects: [] }), false);
  });

  it('matches tool refs by glob; with tools, an event without a tool does not match', () => {
    const globbed = h({ tools: ['builtin/write-*', 'mcp:files/*'] });
    const at = (tool?: string): boolean => hookMatches(globbed, { event: 'before-tool-call', projects: [], tool });
    assert.equal(at('builtin/write-file'), true);
    assert.equal(at('mcp:files/read_file'), true);
    assert.equal(at('builtin/read-file'), false);
    assert.equal(at(undefined), false);
  });
});

describe('what a hook run decided', () => {
  const o = (x: Partial<Parameters<typeof decideHook>[1]>) => ({ answer: '', output: '', ...x });

  it('a veto event allows on exit 0, and denies on a deny answer (whole or last line) or a non-zero exit', () => {
    assert.deepEqual(decideHook('before-tool-call', o({ exitCode: 0 })), { decision: 'allow' });
    assert.deepEqual(
      decideHook('before-tool-call', o({ exitCode: 0, answer: '{"decision":"deny","reason":"not on Fridays"}' })),
      { decision: 'deny', reason: 'not on Fridays' },
    );
    assert.deepEqual(decideHook('before-apply', o({ exitCode: 0, answer: 'checking…\n{"decision":"deny"}\n' })), {
      decision: 'deny',
      reason: 'denied without a reason',
    });
    assert.deepEqual(decideHook('before-tool-call', o({ exitCode: 3, output: 'lint failed\nsrc/a.ts: 2 errors\n' })), {
      decision: 'deny',
      reason: 'src/a.ts: 2 errors',
    });
    assert.deepEqual(decideHook('before-tool-call', o({ exitCode: 3 })), {
      decision: 'deny',
      reason: 'it exited with status 3',
    });
    assert.deepEqual(decideHook('before-tool-call', o({ exitCode: 0, answer: '{"decision":"allow"}' })), {
      decision: 'allow',
    });
  });

  it('a webhook of a veto event denies on a status outside 2xx, and by its answer', () => {
    assert.deepEqual(decideHook('before-apply', o({ status: 204 })), { decision: 'allow' });
    assert.deepEqual(decideHook('before-apply', o({ status: 500 })), {
      decision: 'deny',
      reason: 'it answered HTTP 500',
    });
    assert.deepEqual(decideHook('before-apply', o({ status: 200, answer: '{"decision":"deny","reason":"frozen"}' })), {
      decision: 'deny',
      reason: 'frozen',
    });
  });

  it('fails closed: a veto event whose hook did not answer denies, saying so', () => {
    assert.deepEqual(decideHook('before-tool-call', o({ failure: 'it timed out after 1 s' })), {
      decision: 'deny',
      reason: 'the hook failed, so the tool call is refused: it timed out after 1 s',
    });
    assert.deepEqual(decideHook('before-apply', o({ failure: 'x could not be reached' })), {
      decision: 'deny',
      reason: 'the hook failed, so the apply is refused: x could not be reached',
    });
  });

  it('the other events never deny: ok, or failed with why', () => {
    assert.deepEqual(decideHook('after-tool-call', o({ exitCode: 0, answer: '{"decision":"deny"}' })), {
      decision: 'ok',
    });
    assert.deepEqual(decideHook('plan-phase', o({ exitCode: 1 })), {
      decision: 'failed',
      reason: 'it exited with status 1',
    });
    assert.deepEqual(decideHook('after-apply', o({ failure: 'it timed out after 2 s' })), {
      decision: 'failed',
      reason: 'it timed out after 2 s',
    });
  });

  it('reads only decision objects as answers', () => {
    assert.equal(answerDecision('{"decision":"maybe"}'), undefined);
    assert.equal(answerDecision('deny'), undefined);
    assert.equal(answerDecision('[1]'), undefined);
  });
});

describe('kept output', () => {
  it('keeps at most 4 KiB of UTF-8, never cutting a character', () => {
    assert.deepEqual(truncateBytes('short'), { text: 'short', truncated: false });
    const long = truncateBytes('é'.repeat(3000));
    assert.equal(long.truncated, true);
    assert.equal(Buffer.byteLength(long.text), 4096);
    assert.equal(long.text, 'é'.repeat(2048));
    const odd = truncateBytes(`x${'é'.repeat(3000)}`);
    assert.equal(Buffer.byteLength(odd.text), 4095);
  });
});
