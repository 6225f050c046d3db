import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ResourceDefinition } from '../../../../src/domain/registry/resource.definition.ts';

const remote = (url: string): ReturnType<typeof ResourceDefinition.safeParse> =>
  ResourceDefinition.safeParse({ name: 'team/app', type: 'git-remote', url });

describe('a git-remote resource URL', () => {
  it('accepts https, http and git URLs to a named host', () => {
    for (const url of ['https://example.com/o/r.git', 'http://git.lan:8080/r', 'git://127.0.0.1:9418/app.git'])
      assert.equal(remote(url).success, true, url);
  });

  for (const [url, why] of [
    ['file:///srv/repos/secret.git', /file URLs are refused/],
    ['ext::sh%20-c%20touch%20x', /transport helpers \("ext::"\) are refused/],
    ['ssh://-oProxyCommand=touch%20x/r', /ssh URLs are refused/],
    ['git@github.com:o/r.git', /host:path ssh addresses are refused/],
    ['github.com:o/r.git', /host:path ssh addresses are refused/],
    ['git.lan:r.git', /host:path ssh addresses are refused/],
    ['/srv/repos/app.git', /local paths/],
    ['-uhttps://x/r', /must not start with "-"/],
    ['https://user:tok@example.com/r.git', /must not hold a user name or password/],
    ['https://example.com/r.git?x=1', /query or fragment/],
  ] as const) {
    it(`refuses ${url}`, () => {
      const r = remote(url);
      assert.equal(r.success, false);
      assert.match(r.error?.issues.map((i) => i.message).join('; ') ?? '', why);
    });
  }

  it('takes push branch or target only, and a secret name for credentials', () => {
    const base = { name: 'team/app', type: 'git-remote', url: 'https://example.com/r.git' };
    assert.equal(ResourceDefinition.safeParse({ ...base, push: 'target', credentials: 'GIT_TOKEN' }).success, true);
    assert.equal(ResourceDefinition.safeParse({ ...base, push: 'force' }).success, false);
    assert.equal(ResourceDefinition.safeParse({ ...base, credentials: '$(id)' }).success, false);
    assert.equal(ResourceDefinition.safeParse({ ...base, path: '/etc' }).success, false);
  });
});
