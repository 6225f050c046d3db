import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import type { ServeOptions } from '../../../../src/presentation/cli/commands/serve.command.ts';
import { ExitStatus } from '../../../../src/presentation/cli/exit-status.ts';
import { rootCommand } from '../../../../src/presentation/cli/program.ts';
import type { CliIo } from '../../../../src/presentation/cli/render/ui.ts';
import { runServe } from '../../../../src/presentation/cli/serve-cli.ts';
import {
  readServerConfig,
  registerServeWithConfig,
  serveCommandOf,
  serverConfigKeys,
} from '../../../../src/presentation/cli/server-config.ts';
import { intOption } from '../../../../src/presentation/cli/support/options.ts';

const dir = mkdtempSync(join(tmpdir(), 'ca-server-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** Writes a config file (mode 0600 unless said otherwise) and returns its path. */
function file(text: string, mode = 0o600): string {
  const path = join(dir, `server-${n++}.yaml`);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

function io(env: NodeJS.ProcessEnv = {}): { io: CliIo; err: () => string } {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (b: Buffer) => (text += b.toString()));
  const stdout = new PassThrough();
  stdout.resume();
  return { io: { stdout, stderr, stdin: new PassThrough(), env }, err: () => text };
}

/** Runs `agents serve ARGS` with a fake server; returns the options it got (if it started), the exit code and stderr. */
async function serve(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ opts: ServeOptions | undefined; code: number; stderr: string }> {
  let opts: ServeOptions | undefined;
  const c = io(env);
  const code = await runServe(
    ['node', 'agents', 'serve', ...args],
    {
      version: '1.0.0',
      serve: async (o) => {
        opts = o;
        return 0;
      },
    },
    c.io,
  );
  return { opts, code, stderr: c.err() };
}

describe('agents serve --config', () => {
  it('sets every kind of flag from the file: numbers, strings, booleans, repeatable lists and global options', async () => {
    const path = file(
      [
        'port: 9000',
        'host: 0.0.0.0',
        'databaseUrl: postgres://u@db:5432/agents',
        'allowEgress: [llm.internal:8080, 10.0.0.5]',
        'readOnlyPath: /opt/go',
        'verbose: true',
        'dataDir: /srv/agents',
        'retentionDays: 7',
      ].join('\n'),
    );
    const { opts, code } = await serve(['--config', path]);
    assert.equal(code, 0);
    assert.equal(opts?.port, 9000);
    assert.equal(opts?.host, '0.0.0.0');
    assert.equal(opts?.databaseUrl, 'postgres://u@db:5432/agents');
    assert.deepEqual(opts?.allowEgress, ['llm.internal:8080', '10.0.0.5']);
    assert.deepEqual(opts?.readOnlyPaths, ['/opt/go']);
    assert.equal(opts?.verbose, true);
    assert.equal(opts?.dataDir, '/srv/agents');
    assert.equal(opts?.retentionDays, 7);
  });

  it('is found through CLEVERAGENTS_CONFIG when --config is not given', async () => {
    const { opts } = await serve([], { CLEVERAGENTS_CONFIG: file('port: 9001\n') });
    assert.equal(opts?.port, 9001);
  });

  it('is not read by a local agent (--stdio) through the variable, only through --config', async () => {
    const path = file('dataDir: /srv/the-server\n');
    assert.equal((await serve(['--stdio'], { CLEVERAGENTS_CONFIG: path })).opts?.dataDir, undefined);
    assert.equal((await serve(['--stdio', '--config', path])).opts?.dataDir, '/srv/the-server');
  });

  it('lets a flag beat the environment, the environment beat the file, and the file beat the default', async () => {
    const path = file('port: 9002\nretentionDays: 5\nretentionMaxTasks: 50\nhost: 0.0.0.0\n');
    const { opts } = await serve(['--config', path, '--port', '9100', '--retention-max-tasks', '60'], {
      CLEVERAGENTS_RETENTION_DAYS: '9',
    });
    // Flag over file.
    assert.equal(opts?.port, 9100);
    assert.equal(opts?.retentionMaxTasks, 60);
    // The variable is set: the file's value is not handed over, so the composition root reads the variable.
    assert.equal(opts?.retentionDays, undefined);
    // File over the default (127.0.0.1).
    assert.equal(opts?.host, '0.0.0.0');
  });

  it('refuses an unknown key with its line and the key it probably meant, before the server starts (exit 2)', async () => {
    const path = file('port: 9000\n\ndatabase-url: postgres://db/x\n');
    const { opts, code, stderr } = await serve(['--config', path]);
    assert.equal(opts, undefined);
    assert.equal(code, 2);
    assert.match(stderr, new RegExp(`${path}:3: unknown key "database-url" \\(did you mean "databaseUrl"\\?\\)`));
  });

  it("refuses a value its flag refuses, with the flag parser's own words and the value's line", async () => {
    const path = file('host: 0.0.0.0\nport: eighty\n');
    const { code, stderr } = await serve(['--config', path]);
    assert.equal(code, 2);
    assert.match(stderr, new RegExp(`${path}:2: port: must be a whole number`));
    const high = file('port: 70000\n');
    assert.match((await serve(['--config', high])).stderr, new RegExp(`${high}:1: port: must be between 0 and 65535`));
  });

  it('refuses a wrong type: a string for a switch, a list for a one-value flag, a mapping', async () => {
    const keys = serverConfigKeys(serveCommandOf(programWithServe()));
    const cases: Array<[string, RegExp]> = [
      ['verbose: "yes"\n', /:1: verbose: must be true or false/],
      ['port: [1, 2]\n', /:1: port: takes one value, not a list/],
      ['host:\n  name: x\n', /:2: host: must be a value or a list of values, not a mapping/],
      ['port: 1\nport: 2\n', /:2:1: not valid YAML: Map keys must be unique/],
      ['- port\n', /:1: the server config file must be a mapping of keys \(stdio|host|port/],
    ];
    for (const [text, want] of cases) assert.throws(() => readServerConfig(file(text), keys), want, text);
  });

  it('names the line and column of a YAML syntax error', async () => {
    const path = file('port: 9000\nhost: [unclosed\n');
    const { code, stderr } = await serve(['--config', path]);
    assert.equal(code, 2);
    assert.match(stderr, new RegExp(`${path}:\\d+:\\d+: not valid YAML`));
  });

  it('names a file that does not exist', async () => {
    const { code, stderr } = await serve(['--config', join(dir, 'missing.yaml')]);
    assert.equal(code, 2);
    assert.match(stderr, /cannot read the server config file .*missing\.yaml/);
  });

  it("takes a flag added to serve as a key at once, parsed by that flag's own parser", async () => {
    const program = programWithServe();
    serveCommandOf(program).option(
      '--warm-up-ms <ms>',
      'a flag another change adds (env CLEVERAGENTS_WARM_UP_MS)',
      intOption(0),
    );
    const keys = serverConfigKeys(serveCommandOf(program));
    const warmUp = keys.find((k) => k.key === 'warmUpMs');
    assert.equal(warmUp?.env, 'CLEVERAGENTS_WARM_UP_MS');
    assert.deepEqual(
      readServerConfig(file('warmUpMs: 2500\n'), keys).map((s) => [s.key, s.value]),
      [['warmUpMs', 2500]],
    );
    assert.throws(() => readServerConfig(file('warmUpMs: -1\n'), keys), /:1: warmUpMs: must be a whole number/);
  });

  it('has a key for every visible flag of serve, and none for --stdio or --config', () => {
    const serveCmd = serveCommandOf(programWithServe());
    const keys = new Set(serverConfigKeys(serveCmd).map((k) => k.key));
    for (const o of serveCmd.options) {
      const name = o.attributeName();
      if (o.hidden || name === 'stdio' || name === 'config') assert.ok(!keys.has(name), name);
      else assert.ok(keys.has(name), name);
    }
    for (const global of ['token', 'dataDir', 'verbose']) assert.ok(keys.has(global), global);
  });

  it('warns (one JSON line on stderr) when a file holding a secret may be read by others, and not when it is private', async () => {
    const text = 'token: s3cret-token-value\ndatabaseUrl: postgres://u:pw@db/x\n';
    const open = await serve(['--config', file(text, 0o644)]);
    assert.equal(open.code, 0);
    const line = JSON.parse(open.stderr.trim()) as { level: number; msg: string };
    assert.equal(line.level, 40);
    assert.match(line.msg, /holds secrets \(token, databaseUrl\) and may be read by group or others \(mode 644\)/);
    const closed = await serve(['--config', file(text, 0o600)]);
    assert.equal(closed.stderr, '');
  });
});

function programWithServe(): ReturnType<typeof rootCommand> {
  const c = io();
  const program = rootCommand('1.0.0', c.io);
  registerServeWithConfig(program, async () => 0, new ExitStatus(c.io), c.io);
  return program;
}
