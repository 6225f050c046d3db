/**
 * End to end: the registries through the built `agents` CLI, as a user runs it — a real
 * subprocess per call (each spawns its own local agent over stdio, so every call after the first
 * reads what an earlier process wrote), no TTY.
 */
import assert from 'node:assert/strict';
import { agentsCli } from '../support/cli.ts';
import { copyRegistryFixtures, REGISTRY_FIXTURES } from '../support/registry-fixtures.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { e2eRoot } from '../support/modes.ts';

const ROOT = e2eRoot('agents-registry-e2e');
const DEFS = join(ROOT, 'defs');
const DATA = join(ROOT, 'data');
const cli = agentsCli({ dataDir: DATA, configHome: join(ROOT, 'no-config'), cwd: ROOT });

const FIXTURE_SET = REGISTRY_FIXTURES;

describe('agents registries (actor, tool, skill, resource, project, action), local mode', { concurrency: 4 }, () => {
  before(async () => {
    // The fixtures next to a git repository `api` (the resource's `path: ./api`), on branch main.
    copyRegistryFixtures(DEFS);
    // Each add is its own process (and agent): the later ones see what the earlier ones stored.
    for (const f of FIXTURE_SET) {
      const res = await cli.run([f.kind, 'add', '--config', join(DEFS, f.file)]);
      assert.equal(res.code, 0, `${f.file}: ${res.stderr}`);
      assert.equal(res.stdout, `added\t${f.kind}\t${f.name}\t1\n`);
    }
  });

  it('reads every fixture back (another process) with the definition equal to its file, the resource path resolved', async () => {
    const shown = await Promise.all(FIXTURE_SET.map((f) => cli.ok([f.kind, 'show', f.name])));
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
    const res = await cli.run(['skill', 'show', 'shell']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^kind: skill\nname: local\/shell\nrevision: 1\nhash: sha256:[0-9a-f]{64}\n/);
    assert.match(res.stdout, /^tool: builtin\/list-files {2}read-only \(readOnly=true, writes=false\) {2}via direct$/m);
    assert.match(res.stdout, /^used by: actor local\/reviewer$/m);
    assert.match(res.stdout, /^definition:\n {2}name: local\/shell\n/m);
  });

  it('an invalid file exits 7 with every problem as file:line: field: problem, and nothing is written', async () => {
    const res = await cli.run(['actor', 'add', '--config', join(DEFS, 'broken.actor.yaml')]);
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
    const data = await (
      await cli.json(['actor', 'add', '--config', join(DEFS, 'broken.actor.yaml')], { code: 7 })
    ).data;
    assert.ok(
      data.error.fields.some(
        (f: { file: string; line: number; field: string }) =>
          f.file === 'broken.actor.yaml' && f.line === 4 && f.field === 'temperature',
      ),
    );
    const actors = await cli.ok(['actor', 'list', '--namespace', 'local']);
    assert.deepEqual(
      actors.items.map((a: { name: string }) => a.name),
      ['local/reviewer'],
    );
  });

  it('a missing file is a usage error; a duplicate or a stale revision is invalid state (5)', async () => {
    const [missing, dup, stale, same] = await Promise.all([
      cli.run(['tool', 'add', '--config', join(DEFS, 'nope.yaml')]),
      cli.run(['tool', 'add', '--config', join(DEFS, 'prettier.tool.yaml')]),
      cli.run([
        'actor',
        'update',
        'reviewer',
        '--config',
        join(DEFS, 'reviewer.actor.yaml'),
        '--expected-revision',
        '7',
      ]),
      cli.run([
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
    const added = await cli.run(
      ['resource', 'add', 'git-checkout', 'web', '--path', './api', '--branch', 'main', '--description', 'from flags'],
      { cwd: DEFS },
    );
    assert.equal(added.code, 0, added.stderr);
    assert.equal(added.stdout, 'added\tresource\tlocal/web\t1\n');
    const created = await cli.run([
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
      cli.ok(['resource', 'show', 'web']),
      cli.ok(['project', 'show', 'local/web']),
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

    const inUse = await cli.run(['resource', 'remove', 'web']);
    assert.equal(inUse.code, 5);
    assert.match(inUse.stderr, /EntityInUseError/);
    assert.match(inUse.stderr, /^used by: project local\/web$/m);
    assert.match(inUse.stderr, /^hint: .*--force/m);
    assert.equal((await cli.ok(['resource', 'show', 'web'])).revision, 1, 'nothing was removed');

    const forced = await cli.run(['resource', 'remove', 'web', '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(forced.stdout, 'removed\tresource\tlocal/web\n');
    assert.match(forced.stderr, /project local\/web still refers to resource local\/web/);
    const gone = await cli.run(['resource', 'show', 'web']);
    assert.equal(gone.code, 3);
    assert.match(gone.stderr, /hint: .*agents resource list/);
    const dangling = await cli.ok(['project', 'show', 'web']);
    assert.deepEqual(dangling.derived.resources, [{ name: 'local/web', missing: true, exists: false }]);
  });

  it('a resource from flags is checked: a missing path exits 7 naming the field', async () => {
    const res = await cli.run(['resource', 'add', 'fs-directory', 'ghost', '--path', join(ROOT, 'no-such-dir')]);
    assert.equal(res.code, 7);
    assert.match(res.stderr, /^field: path: .*no-such-dir does not exist$/m);
  });

  it('list: a tab-separated table in plain mode (summary on stderr), an aligned one in rich mode; filters and --all', async () => {
    const [plain, rich, typed, regex, all] = await Promise.all([
      cli.run(['actor', 'list']),
      cli.run(['--format', 'rich', 'tool', 'list', '--namespace', 'builtin']),
      cli.ok(['tool', 'list', '--type', 'command']),
      cli.ok(['action', 'list', '--name', '^builtin/r']),
      cli.ok(['tool', 'list', '--all', '--page-size', '3']),
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
      cli.run(['namespace', 'list']),
      cli.ok(['namespace', 'show', 'local']),
      cli.ok(['namespace', 'members', 'local']),
      cli.run(['resource', 'type', 'list']),
      cli.ok(['resource', 'type', 'show', 'git-checkout']),
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
