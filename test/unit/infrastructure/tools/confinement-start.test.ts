/**
 * The confinement probe runs beside the agent's start (CommandConfinement.start): what needs it
 * waits for it, and a probe that throws refuses commands with its reason instead of failing later.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  BuiltinToolRunner,
  CommandConfinement,
  GitSandboxManager,
  HostSystemProbe,
  type ConfinementSettings,
  type Storage,
} from '../../../../src/infrastructure/index.ts';
import type { SandboxInfo, ToolCallRequest } from '../../../../src/application/index.ts';
import type { ToolDefinition } from '../../../../src/domain/registry/tool.definition.ts';
import { BUILTIN_TOOLS } from '../../../../src/domain/registry/builtins.ts';
import { git, rmrf, write } from '../fixtures/repos.ts';

const runCommand = BUILTIN_TOOLS.find((t) => t.name === 'builtin/run-command') as ToolDefinition;

describe('the confinement probe, started beside the start', () => {
  let dir: string;
  let repo: string;
  let sandbox: SandboxInfo;
  const request = (script: string): ToolCallRequest => ({
    tool: runCommand,
    args: { program: 'sh', args: ['-c', script] },
    sandbox,
    signal: new AbortController().signal,
    timeoutMs: 20_000,
    network: 'none',
  });

  before(async () => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ca-confinement-start-')));
    repo = path.join(dir, 'repo');
    fs.mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    write(repo, 'a.txt', 'one\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'initial');
    sandbox = await new GitSandboxManager({ root: path.join(dir, 'sandboxes') }).create('P1', {
      name: 'local/app',
      type: 'git-checkout',
      path: repo,
    });
  });
  after(() => rmrf(dir));

  it('a probe that throws leaves commands refused with its reason, and diagnostics fail the check', async () => {
    const settings: ConfinementSettings = { mode: 'bubblewrap', home: dir, secrets: [] };
    // The probe's first read throws: whatever goes wrong inside it must become the refusal's reason.
    Object.defineProperty(settings, 'serverEnv', {
      get() {
        throw new Error('the environment cannot be read');
      },
    });
    const confinement = CommandConfinement.start(settings);
    const settled = await confinement;
    assert.equal(settled.mode, 'unavailable');
    const runner = new BuiltinToolRunner({ confinement });
    assert.equal(await runner.confinement(), 'unavailable');
    const r = await runner.run(request('echo ran > ran.txt'));
    assert.equal(r.ok, false);
    assert.match(r.summary, /commands are refused: .*the confinement probe failed: the environment cannot be read/);
    assert.equal(fs.existsSync(path.join(sandbox.root, 'ran.txt')), false, 'nothing ran');
    const storage = { ping: async () => {} } as unknown as Storage;
    const probe = new HostSystemProbe({ storage, dataDir: dir, version: '0', confinement });
    const check = (await probe.checks()).find((c) => c.name === 'command confinement');
    assert.equal(check?.status, 'fail');
    assert.match(check?.detail ?? '', /the confinement probe failed: the environment cannot be read/);
  });

  it('a command waits for the probe still under way, then runs the way it decided', async () => {
    let decide!: (c: CommandConfinement) => void;
    const pending = new Promise<CommandConfinement>((resolve) => (decide = resolve));
    const runner = new BuiltinToolRunner({ confinement: pending });
    let done = false;
    const running = runner.run(request('echo ran > ran.txt')).finally(() => (done = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(done, false, 'the command waits for the probe');
    assert.equal(fs.existsSync(path.join(sandbox.root, 'ran.txt')), false);
    decide(CommandConfinement.unconfined());
    const r = await running;
    assert.equal(r.ok, true, r.summary);
    assert.equal(r.confinement, 'none');
    assert.equal(fs.readFileSync(path.join(sandbox.root, 'ran.txt'), 'utf8'), 'ran\n');
  });
});
