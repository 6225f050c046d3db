/**
 * End to end: the registries through the built `agents` CLI, as a user runs it — a real
 * subprocess per call (each spawns its own local agent over stdio, so every call after the first
 * reads what an earlier process wrote), no TTY.
 */
import assert from 'node:assert/strict';
import { BIN, cliEnv, collect, type CliResult } from '../support/cli.ts';
import { copyRegistryFixtures, REGISTRY_FIXTURES } from '../support/registry-fixtures.ts';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';

const ROOT = mkdtempSync(join(tmpdir(), 'agents-registry-e2e-'));
const DEFS = join(ROOT, 'defs');
const DATA = join(ROOT, 'data');

type Result = CliResult;

function run(args: string[], opts: { cwd?: string } = {}): Promise<Result> {
  const env = cliEnv(DATA, join(ROOT, 'no-config'));
  return collect(
    spawn(process.execPath, [BIN, ...args], { env, cwd: opts.cwd ?? ROOT, stdio: ['ignore', 'pipe', 'pipe'] }),
    { timeoutMs: 30_000 },
  );
}

/** `agents --format json …`: the envelope's data, after checking the exit code. */
async function json(args: string[], expectCode = 0): Promise<any> {
  const res = await run(['--format', 'json', ...args]);
  let env: { exitCode: number; data: any };
  try {
    env = JSON.parse(res.stdout);
  } catch {
    throw new Error(`not one JSON envelope (exit ${res.code}):\n${res.stdout}\n${res.stderr}`);
  }
  assert.equal(res.code, expectCode, `agents ${args.join(' ')}: ${res.stdout}`);
  assert.equal(env.exitCode, expectCode);
  return env.data;
}

const FIXTURE_SET = REGISTRY_FIXTURES;

after(() => rmSync(ROOT, { recursive: true, force: true }));

describe('agents registries (actor, tool, skill, resource, project, action), local mode', { concurrency: 4 }, () => {
  before(async () => {
    // The fixtures next to a git repository `api` (the resource's `path: ./api`), on branch main.
    copyRegistryFixtures(DEFS);
    // Each add is its own process (and agent): the later ones see what the earlier ones stored.
    for (const f of FIXTURE_SET) {
      const res = await run([f.kind, 'add', '--config', join(DEFS, f.file)]);
      assert.equal(res.code, 0, `${f.file}: ${res.stderr}`);
      assert.equal(res.stdout, `added\t${f.kind}\t${f.name}\t1\n`);
    }
  });

  it('reads every fixture back (another process) with the definition equal to its file, the resource path resolved', async () => {
    const shown = await Promise.all(FIXTURE_SET.map((f) => json([f.kind, 'show', f.name])));
    FIXTURE_SET.forEach((f, i) => {
      const expected = parseYaml(readFileSync(join(DEFS, f.file), 'utf8')) as Record<string, unknown>;
      if (f.kind === 'resource') expected['path'] = join(DEFS, 'api');
      const e = shown[i];
      assert.deepEqual(e.definition, expected, f.file);
      assert.equal(e.revision, 1);
      assert.match(e.contentHash, /^sha256:[0-9a-f]{64}$/);
      assert.ok(Date.parse(e.createdAt) > 0 && e.createdAt === e.updatedAt);
    });
    const [tool, skill, actor, resource, project, action] = shown;
    assert.deepEqual(tool.derived.usedBy.map((r: { kind: string; name: string }) => `${r.kind} ${r.name}`).sort(), [
      'action local/rename-symbol',
      'skill local/shell',
    ]);
    assert.deepEqual(
      skill.derived.tools.map((t: { name: string; readOnly: boolean; writes: boolean }) => [
        t.name,
        t.readOnly,
        t.writes,
      ]),
      [
        ['builtin/run-command', false, true],
        ['builtin/list-files', true, false],
        ['local/prettier', false, true],
      ],
    );
    assert.equal(actor.derived.provider, 'openai-compatible');
    assert.deepEqual(actor.derived.skills, ['local/shell']);
    assert.equal(resource.derived.gitWorkTree, true);
    assert.equal(resource.derived.currentBranch, 'main');
    assert.deepEqual(project.derived.resources, [
      { name: 'local/api', type: 'git-checkout', path: join(DEFS, 'api'), exists: true },
    ]);
    assert.equal(action.derived.steps, 2);
  });

  it('show in plain mode prints the fields, the derived facts and the definition as YAML', async () => {
    const res = await run(['skill', 'show', 'shell']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^kind: skill\nname: local\/shell\nrevision: 1\nhash: sha256:[0-9a-f]{64}\n/);
    assert.match(res.stdout, /^tool: builtin\/list-files {2}read-only \(readOnly=true, writes=false\) {2}via direct$/m);
    assert.match(res.stdout, /^used by: actor local\/reviewer$/m);
    assert.match(res.stdout, /^definition:\n {2}name: local\/shell\n/m);
  });

  it('an invalid file exits 7 with every problem as file:line: field: problem, and nothing is written', async () => {
    const res = await run(['actor', 'add', '--config', join(DEFS, 'broken.actor.yaml')]);
    assert.equal(res.code, 7);
    assert.equal(res.stdout, '');
    for (const line of [
      /^broken\.actor\.yaml:1: name: must be namespace\/name/m,
      /^broken\.actor\.yaml:2: provider: /m,
      /^broken\.actor\.yaml:3: model: is required$/m,
      /^broken\.actor\.yaml:4: temperature: must be between 0 and 2$/m,
      /^broken\.actor\.yaml:5: maxTokens: must be positive$/m,
      /^broken\.actor\.yaml:8: skills\[0\]: no skill named local\/nope/m,
    ]) {
      assert.match(res.stderr, line);
    }
    assert.match(res.stderr, /^error: broken\.actor\.yaml has 7 problems \(ValidationError\)$/m);
    const data = await json(['actor', 'add', '--config', join(DEFS, 'broken.actor.yaml')], 7);
    assert.ok(
      data.error.fields.some(
        (f: { file: string; line: number; field: string }) =>
          f.file === 'broken.actor.yaml' && f.line === 4 && f.field === 'temperature',
      ),
    );
    const actors = await json(['actor', 'list', '--namespace', 'local']);
    assert.deepEqual(
      actors.items.map((a: { name: string }) => a.name),
      ['local/reviewer'],
    );
  });

  it('a missing file is a usage error; a duplicate or a stale revision is invalid state (5)', async () => {
    const [missing, dup, stale, same] = await Promise.all([
      run(['tool', 'add', '--config', join(DEFS, 'nope.yaml')]),
      run(['tool', 'add', '--config', join(DEFS, 'prettier.tool.yaml')]),
      run(['actor', 'update', 'reviewer', '--config', join(DEFS, 'reviewer.actor.yaml'), '--expected-revision', '7']),
      run([
        'actor',
        'update',
        'local/reviewer',
        '--config',
        join(DEFS, 'reviewer.actor.yaml'),
        '--expected-revision',
        '1',
      ]),
    ]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read .*nope\.yaml: no such file/);
    assert.equal(dup.code, 5);
    assert.match(dup.stderr, /DuplicateEntityError/);
    assert.equal(stale.code, 5);
    assert.match(stale.stderr, /RevisionConflictError/);
    assert.match(stale.stderr, /^revision: 1 \(you expected 7\)$/m);
    assert.equal(same.code, 0, same.stderr);
    assert.equal(same.stdout, 'unchanged\tactor\tlocal/reviewer\t1\n');
  });

  it('resource add from flags (path resolved against the cwd), project create, remove in use (5), --force', async () => {
    const added = await run(
      ['resource', 'add', 'git-checkout', 'web', '--path', './api', '--branch', 'main', '--description', 'from flags'],
      { cwd: DEFS },
    );
    assert.equal(added.code, 0, added.stderr);
    assert.equal(added.stdout, 'added\tresource\tlocal/web\t1\n');
    const created = await run([
      'project',
      'create',
      'web',
      '--resource',
      'web',
      '--automation-profile',
      'auto',
      '--description',
      'the web app',
    ]);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout, 'added\tproject\tlocal/web\t1\n');
    const [resource, project] = await Promise.all([
      json(['resource', 'show', 'web']),
      json(['project', 'show', 'local/web']),
    ]);
    assert.deepEqual(resource.definition, {
      name: 'local/web',
      type: 'git-checkout',
      path: join(DEFS, 'api'),
      branch: 'main',
      description: 'from flags',
    });
    assert.deepEqual(project.definition, {
      name: 'local/web',
      resources: ['local/web'],
      description: 'the web app',
      settings: { automationProfile: 'auto' },
    });

    const inUse = await run(['resource', 'remove', 'web']);
    assert.equal(inUse.code, 5);
    assert.match(inUse.stderr, /EntityInUseError/);
    assert.match(inUse.stderr, /^used by: project local\/web$/m);
    assert.match(inUse.stderr, /^hint: .*--force/m);
    assert.equal((await json(['resource', 'show', 'web'])).revision, 1, 'nothing was removed');

    const forced = await run(['resource', 'remove', 'web', '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(forced.stdout, 'removed\tresource\tlocal/web\n');
    assert.match(forced.stderr, /project local\/web still refers to resource local\/web/);
    const gone = await run(['resource', 'show', 'web']);
    assert.equal(gone.code, 3);
    assert.match(gone.stderr, /hint: .*agents resource list/);
    const dangling = await json(['project', 'show', 'web']);
    assert.deepEqual(dangling.derived.resources, [{ name: 'local/web', missing: true, exists: false }]);
  });

  it('a resource from flags is checked: a missing path exits 7 naming the field', async () => {
    const res = await run(['resource', 'add', 'fs-directory', 'ghost', '--path', join(ROOT, 'no-such-dir')]);
    assert.equal(res.code, 7);
    assert.match(res.stderr, /^field: path: .*no-such-dir does not exist$/m);
  });

  it('list: a tab-separated table in plain mode (summary on stderr), an aligned one in rich mode; filters and --all', async () => {
    const [plain, rich, typed, regex, all] = await Promise.all([
      run(['actor', 'list']),
      run(['--format', 'rich', 'tool', 'list', '--namespace', 'builtin']),
      json(['tool', 'list', '--type', 'command']),
      json(['action', 'list', '--name', '^builtin/r']),
      json(['tool', 'list', '--all', '--page-size', '3']),
    ]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.ok(
      plain.stdout
        .split('\n')
        .includes(
          'local/reviewer\t1\topenai-compatible\tqwen2.5-coder:14b\tReviews a change for correctness and style',
        ),
      plain.stdout,
    );
    assert.ok(plain.stdout.split('\n').some((l) => l.startsWith('builtin/echo\t1\tbuiltin\techo\t')));
    assert.match(
      plain.stderr,
      /^summary: 3 actors · by namespace: builtin 2, local 1 · by provider: builtin 2, openai-compatible 1$/m,
    );
    assert.match(rich.stdout, /^NAME +REV +SOURCE +ACCESS +DESCRIPTION$/m);
    assert.match(rich.stdout, /^builtin\/read-file +1 +builtin +read-only +Read a text file/m);
    assert.match(rich.stdout, /^16 tools · by namespace: builtin 16 · by source: builtin 16$/m);
    assert.deepEqual(
      typed.items.map((t: { name: string }) => t.name),
      ['local/prettier'],
    );
    assert.deepEqual(
      regex.items.map((a: { name: string }) => a.name),
      ['builtin/replace', 'builtin/run-command'],
    );
    assert.equal(all.items.length, all.totalSize);
    assert.equal(all.items.length, 17);
    assert.equal(all.nextPageToken, '');
  });

  it('namespace list/show/members and resource type list/show', async () => {
    const [list, show, members, types, type] = await Promise.all([
      run(['namespace', 'list']),
      json(['namespace', 'show', 'local']),
      json(['namespace', 'members', 'local']),
      run(['resource', 'type', 'list']),
      json(['resource', 'type', 'show', 'git-checkout']),
    ]);
    assert.equal(list.code, 0, list.stderr);
    const rows = list.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t').slice(0, 3));
    assert.deepEqual(rows, [
      ['local', 'owner', 'local'],
      ['builtin', 'viewer', 'system'],
    ]);
    assert.equal(show.role, 'owner');
    assert.equal(show.entities.actor, 1);
    assert.equal(members.members[0].role, 'owner');
    assert.match(types.stdout, /^git-checkout\t--path \[--branch\]\tA git work tree/m);
    assert.match(types.stdout, /^fs-directory\t--path\t/m);
    assert.deepEqual(
      type.fields.map((f: { flag: string }) => f.flag),
      ['--path', '--branch'],
    );
  });
});
