import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { EgressGuard, GitRemotes, GitSandboxManager } from '../../../../src/infrastructure/index.ts';
import type { GitRemoteResource } from '../../../../src/domain/registry/resource.definition.ts';
import { AppError } from '../../../../src/domain/errors.ts';
import { startGitDaemon, type GitDaemon } from '../../../support/git-daemon.ts';
import { freePort } from '../../../support/ports.ts';
import { git, makeRepo, rmrf, tmpDir, write } from '../fixtures/repos.ts';

describe('git-remote: a bare repository served by git daemon on loopback', () => {
  let base: string;
  let bare: string;
  let data: string;
  let daemon: GitDaemon;
  let port: number;
  let resource: GitRemoteResource;

  const remotesWith = (allow: string[]): GitRemotes =>
    new GitRemotes({
      dirOf: (ns) => path.join(data, 'workspaces', ns, '.remotes'),
      secret: async () => undefined,
      egress: new EgressGuard({ allow }),
    });

  before(async () => {
    base = tmpDir('remote');
    data = tmpDir('data');
    const seed = makeRepo();
    bare = path.join(base, 'app.git');
    git(base, 'clone', '-q', '--bare', seed, bare);
    rmrf(seed);
    daemon = await startGitDaemon(base);
    port = daemon.port;
    resource = { name: 'team/app', type: 'git-remote', url: daemon.url('app.git'), branch: 'main' };
  });
  after(async () => {
    await daemon.close();
    rmrf(base, data);
  });

  it('refuses the loopback host unless it is allowlisted, and names the --allow-egress entry', async () => {
    const remotes = remotesWith([]);
    await assert.rejects(remotes.sync(resource), (e: unknown) => {
      assert.ok(e instanceof AppError);
      assert.equal(e.reason, 'FORBIDDEN');
      assert.match(
        e.message,
        /Resource team\/app: egress to 127\.0\.0\.1 is refused: it is .*loopback.*--allow-egress 127\.0\.0\.1:\d+/,
      );
      return true;
    });
  });

  it("connects inward without the allowlist where the resource's namespace holds private-network, asked at each use", async () => {
    const holds = new Set(['team']);
    const asked: string[] = [];
    const remotes = new GitRemotes({
      dirOf: (ns) => path.join(data, 'granted', ns),
      secret: async () => undefined,
      egress: new EgressGuard({ allow: [] }),
      privateNetwork: async (ns) => {
        asked.push(ns);
        return holds.has(ns);
      },
    });
    const synced = await remotes.sync(resource);
    assert.equal(synced.tip, git(bare, 'rev-parse', 'main'));
    holds.delete('team');
    await assert.rejects(remotes.sync(resource), /egress to 127\.0\.0\.1 is refused/);
    assert.deepEqual(asked, ['team', 'team']);
  });

  it('clones into the workspace, pushes the plan branch for review, and refuses a target push after the remote moved', async () => {
    const remotes = remotesWith([`127.0.0.1:${port}`]);
    const manager = new GitSandboxManager({ root: path.join(data, 'sandboxes'), remotes });
    const tip = git(bare, 'rev-parse', 'main');
    const sb = await manager.create('P1', resource);
    assert.equal(sb.remote, true);
    assert.equal(sb.baseCommit, tip);
    assert.equal(sb.targetBranch, 'main');
    assert.equal(sb.source, fs.realpathSync(path.join(data, 'workspaces', 'team', '.remotes', 'team.app.git')));
    // The clone never stores the URL.
    assert.doesNotMatch(fs.readFileSync(path.join(sb.source, 'config'), 'utf8'), /127\.0\.0\.1/);

    write(sb.root, 'src/new.ts', 'export const n = 1;\n');
    await manager.checkpoint(sb, 'work');
    const pushed = await manager.apply(sb, 'Add n', resource);
    assert.ok(pushed.ok);
    assert.deepEqual(pushed.files, ['src/new.ts']);
    assert.equal(pushed.pushedTo, 'cleveragents/plan-P1');
    assert.equal(git(bare, 'rev-parse', 'cleveragents/plan-P1'), pushed.commit);
    assert.equal(git(bare, 'rev-parse', 'cleveragents/plan-P1^'), tip, 'one commit on the plan base');
    assert.equal(git(bare, 'rev-parse', 'main'), tip, 'push: branch leaves the target alone');

    // Someone else pushes to main: push: target is refused, nothing pushed, plan branch unchanged.
    const other = tmpDir('other');
    git(other, 'clone', '-q', bare, 'w');
    const w = path.join(other, 'w');
    write(w, 'README.md', 'moved\n');
    git(w, 'add', '.');
    git(w, '-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '-q', '-m', 'moved');
    git(w, 'push', '-q', 'origin', 'main');
    const moved = git(bare, 'rev-parse', 'main');
    const target = { ...resource, push: 'target' as const };
    const refused = await manager.apply(sb, 'Add n', target);
    assert.equal(refused.ok, false);
    assert.ok(!refused.ok && /moved on the remote since the plan's base/.test(refused.message));
    assert.equal(git(bare, 'rev-parse', 'main'), moved);

    // After a rebase (which fetches first), the push to the target is a fast-forward.
    const rebased = await manager.rebase(sb, target);
    assert.ok(rebased.ok && rebased.moved);
    const landed = await manager.apply(rebased.sandbox, 'Add n', target);
    assert.ok(landed.ok);
    assert.equal(landed.pushedTo, 'main');
    assert.equal(git(bare, 'rev-parse', 'main'), landed.commit);
    assert.equal(git(bare, 'rev-parse', 'main^'), moved);
    assert.equal(git(bare, 'show', 'main:README.md'), 'moved');
    rmrf(other);
  });

  it('says which branch is missing, naming the resource', async () => {
    const remotes = remotesWith([`127.0.0.1:${port}`]);
    await assert.rejects(remotes.sync({ ...resource, branch: 'nope' }), (e: unknown) => {
      assert.ok(e instanceof AppError);
      assert.equal(e.reason, 'NOT_FOUND');
      assert.match(e.message, /Resource team\/app: the remote has no branch nope/);
      return true;
    });
  });

  it('says the remote cannot be reached when nothing listens', async () => {
    const closed = await freePort();
    const remotes = remotesWith([`127.0.0.1:${closed}`]);
    await assert.rejects(remotes.sync({ ...resource, url: `git://127.0.0.1:${closed}/app.git` }), (e: unknown) => {
      assert.ok(e instanceof AppError);
      assert.equal(e.reason, 'UNAVAILABLE');
      assert.match(e.message, /Resource team\/app: the remote 127\.0\.0\.1:\d+ cannot be reached/);
      return true;
    });
  });
});

describe('git-remote credentials', () => {
  it('go to the remote as a header, never on a command line or in the error', async () => {
    const token = 'tok-SECRET-4242';
    const seen: { auth?: string | undefined; inArgv: boolean } = { inArgv: false };
    const server = http.createServer((req, res) => {
      seen.auth ??= req.headers.authorization;
      // While git waits for this answer, no process on the machine has the token in its arguments.
      for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
        try {
          if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(token)) seen.inArgv = true;
        } catch {
          // gone meanwhile
        }
      }
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="x"' }).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    const data = tmpDir('data');
    const remotes = new GitRemotes({
      dirOf: () => data,
      secret: async (ns, name) => (ns === 'team' && name === 'GIT_TOKEN' ? token : undefined),
      egress: new EgressGuard({ allow: [`127.0.0.1:${port}`] }),
    });
    try {
      await assert.rejects(
        remotes.sync({
          name: 'team/app',
          type: 'git-remote',
          url: `http://127.0.0.1:${port}/app.git`,
          branch: 'main',
          credentials: 'GIT_TOKEN',
        }),
        (e: unknown) => {
          assert.ok(e instanceof AppError);
          assert.equal(e.reason, 'FORBIDDEN');
          assert.match(e.message, /the remote refused the credentials \(secret GIT_TOKEN\)/);
          assert.doesNotMatch(`${e.message} ${e.hint ?? ''} ${JSON.stringify(e.details)}`, /SECRET-4242/);
          return true;
        },
      );
      assert.equal(seen.auth, `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`);
      assert.equal(seen.inArgv, false);
      assert.doesNotMatch(fs.readFileSync(path.join(data, 'team.app.git', 'config'), 'utf8'), /SECRET|Authorization/);
    } finally {
      server.close();
      rmrf(data);
    }
  });
});
