/**
 * Credentials in registry definitions (an MCP server's env and headers, a webhook's headers, a
 * URL's userinfo and query) are never printed: `show` and `list` in every output format hide the
 * values and keep the keys (issue #39).
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { agentsCli } from '../support/cli.ts';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-redaction-e2e');
const cli = agentsCli({ dataDir: join(ROOT, 'data'), configHome: join(ROOT, 'no-config'), cwd: ROOT });
const SECRETS = ['ghp_SECRET123', 'sk-live-SECRET', 'hunter2SECRET', 'qSECRET', 'whSECRET'];

const SKILL = `name: local/gh
description: GitHub tools
mcpServers:
  - name: gh
    command: gh-mcp-not-installed
    env: { GITHUB_TOKEN: ghp_SECRET123 }
  - name: web
    url: http://bob:hunter2SECRET@127.0.0.1:9/mcp?api_key=qSECRET
    headers: { Authorization: Bearer sk-live-SECRET }
`;
const HOOK = `name: local/notify
event: after-apply
webhook:
  url: http://127.0.0.1:9/hook
  headers: { X-Token: whSECRET }
`;

const noSecret = (text: string, what: string): void => {
  for (const s of SECRETS) assert.ok(!text.includes(s), `${what} shows ${s}:\n${text}`);
};

describe('registry output hides credentials', () => {
  before(async () => {
    mkdirSync(ROOT, { recursive: true });
    writeFileSync(join(ROOT, 'skill.yaml'), SKILL);
    writeFileSync(join(ROOT, 'hook.yaml'), HOOK);
    for (const [kind, file] of [
      ['skill', 'skill.yaml'],
      ['hook', 'hook.yaml'],
    ] as const) {
      const res = await cli.run([kind, 'add', '--config', join(ROOT, file)]);
      assert.equal(res.code, 0, res.stderr);
      noSecret(res.stdout + res.stderr, `${kind} add`);
    }
  });

  it('skill show and list, in plain, JSON and YAML, keep the keys and hide the values', async () => {
    for (const format of ['plain', 'json', 'yaml']) {
      for (const args of [
        ['skill', 'show', 'gh'],
        ['skill', 'list'],
      ]) {
        const res = await cli.run(['--format', format, ...args]);
        assert.equal(res.code, 0, res.stderr);
        noSecret(res.stdout + res.stderr, `${format} ${args.join(' ')}`);
      }
    }
    const shown = await cli.ok(['skill', 'show', 'gh']);
    const [gh, web] = shown.definition.mcpServers;
    assert.deepEqual(gh.env, { GITHUB_TOKEN: '[redacted]' });
    assert.deepEqual(web.headers, { Authorization: '[redacted]' });
    assert.equal(web.url, 'http://[redacted]:[redacted]@127.0.0.1:9/mcp?api_key=[redacted]');
  });

  it('hook show and list hide the webhook headers', async () => {
    for (const format of ['plain', 'json', 'yaml']) {
      for (const args of [
        ['hook', 'show', 'notify'],
        ['hook', 'list'],
      ]) {
        const res = await cli.run(['--format', format, ...args]);
        assert.equal(res.code, 0, res.stderr);
        noSecret(res.stdout + res.stderr, `${format} ${args.join(' ')}`);
      }
    }
    const shown = await cli.ok(['hook', 'show', 'notify']);
    assert.deepEqual(shown.definition.webhook.headers, { 'X-Token': '[redacted]' });
  });
});
