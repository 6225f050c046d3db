import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REDACTED, redactDefinition, redactUrl } from '../../../../src/domain/registry/redact-definition.ts';

describe('redactDefinition', () => {
  it("hides an MCP server's env and header values and its URL's userinfo and query values, keeping the keys", () => {
    const skill = {
      name: 'local/gh',
      instructions: 'use the token wisely',
      mcpServers: [
        { name: 'gh', command: 'gh-mcp', args: ['--token-file', 'x'], env: { GITHUB_TOKEN: 'ghp_abc123', LANG: 'C' } },
        {
          name: 'web',
          url: 'https://bob:hunter2@mcp.example.com/mcp?api_key=sk-1&region=eu',
          headers: { Authorization: 'Bearer sk-live-xyz' },
        },
      ],
    };
    assert.deepEqual(redactDefinition(skill), {
      name: 'local/gh',
      instructions: 'use the token wisely',
      mcpServers: [
        { name: 'gh', command: 'gh-mcp', args: ['--token-file', 'x'], env: { GITHUB_TOKEN: REDACTED, LANG: REDACTED } },
        {
          name: 'web',
          url: 'https://[redacted]:[redacted]@mcp.example.com/mcp?api_key=[redacted]&region=[redacted]',
          headers: { Authorization: REDACTED },
        },
      ],
    });
    assert.equal(skill.mcpServers[0]?.env?.GITHUB_TOKEN, 'ghp_abc123', 'the original is not changed');
  });

  it("hides a webhook hook's headers and URL query, and an actor's baseUrl userinfo; names of secrets stay", () => {
    const hook = {
      name: 'local/notify',
      event: 'after-apply',
      webhook: { url: 'https://hooks.example.com/x?sig=abc', headers: { 'X-Token': 't0ps3cret' } },
    };
    assert.deepEqual(redactDefinition(hook), {
      name: 'local/notify',
      event: 'after-apply',
      webhook: { url: 'https://hooks.example.com/x?sig=[redacted]', headers: { 'X-Token': REDACTED } },
    });
    const actor = { name: 'local/gpt', baseUrl: 'http://user:pw@127.0.0.1:8080/v1', apiKeySecret: 'openai' };
    assert.deepEqual(redactDefinition(actor), {
      name: 'local/gpt',
      baseUrl: 'http://[redacted]:[redacted]@127.0.0.1:8080/v1',
      apiKeySecret: 'openai',
    });
  });

  it('leaves a URL without userinfo or query, and text that is not a URL, as they are', () => {
    assert.equal(redactUrl('https://mcp.example.com/mcp'), 'https://mcp.example.com/mcp');
    assert.equal(redactUrl('not a url ?a=b'), 'not a url ?a=b');
  });
});
