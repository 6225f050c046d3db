/**
 * The context methods as another principal sees them: a project in a namespace the caller has no
 * role in is not found, with the very message a missing project gets, and nothing of it changes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LOCAL_PRINCIPAL, makePrincipal, type Principal } from '../../../../src/application/index.ts';
import { buildApp, type App } from '../../../../src/main/app.ts';
import {
  A2AClient,
  A2AClientError,
  contextInspect,
  contextSet,
  contextShow,
  contextSimulate,
  projectRegistry,
  resourceRegistry,
} from '../../../../src/protocol/client/index.ts';
import { InMemoryClientTransport } from '../../../../src/protocol/server/in-memory.transport.ts';
import { initRepo } from '../../../support/git.ts';

/** Someone with a role in `team` only. */
const STRANGER: Principal = makePrincipal({ id: 'vera', roles: { team: 'owner' } });

async function failure(p: Promise<unknown>): Promise<A2AClientError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof A2AClientError, String(err));
    return err;
  }
  assert.fail('expected an error');
}

describe("the context methods and another principal's project", () => {
  let app: App;
  let dir: string;
  const client = (principal: Principal): A2AClient =>
    new A2AClient(new InMemoryClientTransport(app.dispatcher, () => ({}), principal, '1.0'));
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ca-ctx-access-'));
    app = await buildApp({
      dataDir: dir,
      inMemory: true,
      validateResults: true,
      card: { endpoint: 'memory://', auth: 'none' },
    });
    initRepo(join(dir, 'repo'), { 'src/a.ts': 'export const a = 1;\n' });
    const local = client(LOCAL_PRINCIPAL);
    await local.call(resourceRegistry.add, {
      definition: { name: 'local/repo', type: 'git-checkout', path: join(dir, 'repo'), branch: 'main' },
    });
    await local.call(projectRegistry.add, { definition: { name: 'local/secret', resources: ['local/repo'] } });
  });
  after(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('show, inspect and simulate answer not found, word for word as for a missing project', async () => {
    const them = client(STRANGER);
    const calls = (project: string) => [
      them.call(contextShow, { project }),
      them.call(contextInspect, { project, goal: 'a' }),
      them.call(contextSimulate, { project, goal: 'a' }),
    ];
    const foreign = await Promise.all(calls('local/secret').map(failure));
    const missing = await Promise.all(calls('local/nobody').map(failure));
    foreign.forEach((f, n) => {
      assert.equal(f.code, -32001, f.message);
      assert.equal(f.message.replace('local/secret', '<p>'), missing[n]?.message.replace('local/nobody', '<p>'));
      assert.doesNotMatch(JSON.stringify(f.data ?? {}), /repo|src\/a\.ts/, 'nothing of the project leaks');
    });
  });

  it('set is not found either, and changes nothing', async () => {
    const err = await failure(
      client(STRANGER).call(contextSet, { project: 'local/secret', view: 'default', settings: { maxFiles: 1 } }),
    );
    assert.equal(err.code, -32001, err.message);
    assert.equal(err.message, 'No project named local/secret');
    const shown = await client(LOCAL_PRINCIPAL).call(contextShow, { project: 'local/secret', view: 'default' });
    assert.equal(shown.revision, 1);
    assert.equal(shown.views[0]?.sources.maxFiles, 'builtin');
  });
});
