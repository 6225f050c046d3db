import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { A2AClient } from '../../../../../src/protocol/client/index.ts';
import { REGISTRIES } from '../../../../../src/protocol/client/index.ts';
import { projectLine, projectOfDirectory } from '../../../../../src/presentation/cli/init/current-project.ts';

const ROOT = mkdtempSync(join(tmpdir(), 'ca-current-project-'));
const outer = join(ROOT, 'mono');
const inner = join(outer, 'packages', 'api');
mkdirSync(join(inner, 'src'), { recursive: true });
mkdirSync(join(ROOT, 'elsewhere'), { recursive: true });

/** A client that answers the two list calls from fixed pages (one page each). */
function registryClient(): A2AClient {
  const resources = [
    { name: 'local/mono', definition: { name: 'local/mono', type: 'git-checkout', path: outer } },
    { name: 'local/api', definition: { name: 'local/api', type: 'fs-directory', path: inner } },
    { name: 'local/lonely', definition: { name: 'local/lonely', type: 'fs-directory', path: join(ROOT, 'elsewhere') } },
  ];
  const projects = [
    { name: 'local/mono', definition: { name: 'local/mono', resources: ['local/mono'] } },
    { name: 'local/api', definition: { name: 'local/api', resources: ['local/api', 'local/mono'] } },
  ];
  const page = (items: unknown[]) => ({ items, nextPageToken: '', totalSize: items.length, summary: {} });
  return {
    call: async (contract: { name: string }) => {
      if (contract.name === REGISTRIES.resource.list.name) return page(resources);
      if (contract.name === REGISTRIES.project.list.name) return page(projects);
      throw new Error(`unexpected call ${contract.name}`);
    },
  } as unknown as A2AClient;
}

describe('the current directory’s project', () => {
  after(() => rmSync(ROOT, { recursive: true, force: true }));
  const signal = new AbortController().signal;

  it('is the project of the innermost resource whose directory contains the current one', async () => {
    const found = await projectOfDirectory(registryClient(), join(inner, 'src'), signal);
    assert.equal(found?.resource.name, 'local/api');
    assert.equal(found?.project.name, 'local/api');
    assert.equal((await projectOfDirectory(registryClient(), outer, signal))?.project.name, 'local/mono');
  });

  it('is none outside every resource, and for a resource no project uses', async () => {
    assert.equal(await projectOfDirectory(registryClient(), ROOT, signal), undefined);
    assert.equal(await projectOfDirectory(registryClient(), join(ROOT, 'elsewhere'), signal), undefined);
    // A sibling whose name starts like a resource's is not inside it.
    mkdirSync(`${outer}-other`, { recursive: true });
    assert.equal(await projectOfDirectory(registryClient(), `${outer}-other`, signal), undefined);
  });

  it('is said once, with where it came from', () => {
    assert.equal(projectLine({ name: 'local/app', source: 'directory' }), 'project local/app (this directory)');
    assert.equal(
      projectLine({ name: 'local/app', source: 'config' }),
      'project local/app (defaultProject in config.yaml)',
    );
  });
});
