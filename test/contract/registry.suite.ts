/** Contract cases of the registries, namespaces and published schemas. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, it } from 'node:test';
import { parse } from 'yaml';
import {
  A2AClient,
  actionRegistry,
  actorRegistry,
  automationProfileRegistry,
  CONTRACTS,
  hookRegistry,
  namespaceList,
  namespaceMembers,
  namespaceShow,
  projectRegistry,
  resourceRegistry,
  resourceTypeList,
  resourceTypeShow,
  rpcDiscover,
  sessionCreate,
  skillRegistry,
  toolRegistry,
  type RegistryContracts,
} from '../../src/protocol/client/index.ts';
import { rpcError } from './a2a.suite.ts';
import type { SuiteContext } from './suite-context.ts';

export const FIXTURES = fileURLToPath(new URL('../fixtures/registry/', import.meta.url));
export const fixture = (file: string): string => readFileSync(join(FIXTURES, file), 'utf8');

/** A git repository with a main branch and one commit. */
export function makeRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]): void => void execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'init');
  return dir;
}

export function registrySuite(ctx: SuiteContext): void {
  let client: A2AClient;
  let work: string;
  const source = (file: string) => ({ source: { text: fixture(file), filename: file, baseDir: work } });
  before(() => {
    client = ctx.harness().client;
    work = mkdtempSync(join(tmpdir(), 'ca-registry-'));
    makeRepo(join(work, 'api'));
    mkdirSync(join(work, 'plain'));
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('lists the built-in tools and actors, with real schemas, and refuses to change them', async () => {
    const tools = await client.call(toolRegistry.list, { namespace: 'builtin' });
    const names = tools.items.map((t) => t.name);
    for (const n of [
      'builtin/read-file',
      'builtin/write-file',
      'builtin/edit-file',
      'builtin/list-files',
      'builtin/search-files',
      'builtin/replace-in-files',
      'builtin/run-command',
      'builtin/git-status',
      'builtin/git-diff',
    ])
      assert.ok(names.includes(n), n);
    const read = await client.call(toolRegistry.show, { name: 'builtin/read-file' });
    assert.equal(read.derived['readOnly'], true);
    assert.equal((read.definition['inputSchema'] as { type: string }).type, 'object');
    const actors = await client.call(actorRegistry.list, { namespace: 'builtin' });
    assert.deepEqual(
      actors.items.map((a) => a.name),
      ['builtin/conformance', 'builtin/echo'],
    );
    const actions = await client.call(actionRegistry.list, { namespace: 'builtin' });
    assert.deepEqual(
      actions.items.map((a) => a.name),
      ['builtin/goal', 'builtin/replace', 'builtin/run-command'],
    );
    await rpcError(client.call(toolRegistry.remove, { name: 'builtin/read-file' }), -32003, 'AuthorizationError');
    await rpcError(
      client.call(actorRegistry.update, {
        name: 'builtin/echo',
        definition: { name: 'builtin/echo', provider: 'builtin', model: 'echo' },
      }),
      -32003,
      'AuthorizationError',
    );
    ctx.record('registry-builtins', { tools: names, actors: actors.items.map((a) => a.name) });
  });

  it('adds the fixture set from YAML and reads every definition back unchanged', async () => {
    const added = [];
    for (const [reg, file] of [
      [toolRegistry, 'prettier.tool.yaml'],
      [skillRegistry, 'shell.skill.yaml'],
      [actorRegistry, 'reviewer.actor.yaml'],
      [resourceRegistry, 'api.resource.yaml'],
      [projectRegistry, 'api.project.yaml'],
      [actionRegistry, 'rename.action.yaml'],
    ] as const) {
      const rows: RegistryContracts = reg;
      const e = await client.call(rows.add, source(file));
      assert.equal(e.revision, 1);
      assert.match(e.contentHash, /^sha256:[0-9a-f]{64}$/);
      const expected = parse(fixture(file)) as Record<string, unknown>;
      if (file === 'api.resource.yaml') expected['path'] = join(work, 'api');
      const shown = await client.call(rows.show, { name: e.name });
      assert.deepEqual(shown.definition, expected, `${file} reads back as written`);
      // The resource's path (and so its hash) is a per-run temp dir.
      added.push(
        file === 'api.resource.yaml'
          ? { ...e, contentHash: '<hash>', definition: { ...e.definition, path: '<work>/api' } }
          : e,
      );
    }
    ctx.record('registry-added', added);
  });

  it('derives facts: flattened skill tools, project paths, actor usage, tool referrers', async () => {
    const skill = await client.call(skillRegistry.show, { name: 'local/shell' });
    const tools = skill.derived['tools'] as Array<{ name: string; readOnly: boolean; writes: boolean }>;
    assert.deepEqual(
      tools.map((t) => [t.name, t.readOnly, t.writes]),
      [
        ['builtin/run-command', false, true],
        ['builtin/list-files', true, false],
        ['local/prettier', false, true],
      ],
    );
    assert.deepEqual(skill.derived['mcpServers'], ['filesystem']);
    const project = await client.call(projectRegistry.show, { name: 'local/api' });
    assert.deepEqual(project.derived['resources'], [
      { name: 'local/api', type: 'git-checkout', path: join(work, 'api'), exists: true },
    ]);
    const actor = await client.call(actorRegistry.show, { name: 'local/reviewer' });
    assert.equal(actor.derived['provider'], 'openai-compatible');
    assert.equal(actor.derived['runnable'], false);
    const prettier = await client.call(toolRegistry.show, { name: 'local/prettier' });
    assert.deepEqual(prettier.derived['usedBy'], [
      { kind: 'action', name: 'local/rename-symbol' },
      { kind: 'skill', name: 'local/shell' },
    ]);
    const resource = await client.call(resourceRegistry.show, { name: 'local/api' });
    assert.equal(resource.derived['gitWorkTree'], true);
    assert.equal(resource.derived['currentBranch'], 'main');
  });

  it('reports every problem of an invalid file at once, with file and line, and writes nothing', async () => {
    const before = (await client.call(actorRegistry.list, {})).totalSize;
    const err = await rpcError(client.call(actorRegistry.add, source('broken.actor.yaml')), -32602, 'ValidationError');
    const byField = new Map(
      err.fieldViolations.map((f) => [f.field, f as { field: string; line?: number; file?: string }]),
    );
    for (const [field, line] of [
      ['name', 1],
      ['provider', 2],
      ['model', 3],
      ['temperature', 4],
      ['maxTokens', 5],
      ['skills[0]', 8],
    ] as const) {
      assert.equal(byField.get(field)?.line, line, `${field} on line ${line}: ${JSON.stringify(err.fieldViolations)}`);
      assert.equal(byField.get(field)?.file, 'broken.actor.yaml');
    }
    assert.equal(byField.get('colour')?.line, 6, 'the unknown key is reported where it is written');
    assert.match(err.message, /broken\.actor\.yaml:4: temperature/);
    assert.equal((await client.call(actorRegistry.list, {})).totalSize, before);
    const syntax = await rpcError(
      client.call(toolRegistry.add, {
        source: { text: 'name: local/x\nname: local/y\n  bad: [', filename: 'dup.yaml' },
      }),
      -32602,
      'ValidationError',
    );
    assert.ok(syntax.fieldViolations.length > 0, 'a syntax error names where it is');
    assert.ok(syntax.fieldViolations.every((f) => f.field === '(syntax)'));
    ctx.record('registry-invalid', err.fieldViolations);
  });

  it('refuses duplicates, bad names and missing paths', async () => {
    await rpcError(client.call(toolRegistry.add, source('prettier.tool.yaml')), -32005, 'DuplicateEntityError');
    await rpcError(client.call(actorRegistry.show, { name: 'Local/Reviewer' }), -32602, 'ValidationError');
    await rpcError(client.call(actorRegistry.show, { name: '../../etc/passwd' }), -32602, 'ValidationError');
    await rpcError(client.call(actorRegistry.show, { name: 'local/nobody' }), -32001, 'ResourceNotFoundError');
    const notGit = await rpcError(
      client.call(resourceRegistry.add, {
        definition: { name: 'local/plain', type: 'git-checkout', path: join(work, 'plain') },
      }),
      -32602,
      'ValidationError',
    );
    assert.match(notGit.message, /not a git work tree/);
    const missing = await rpcError(
      client.call(resourceRegistry.add, {
        definition: { name: 'local/gone', type: 'fs-directory', path: join(work, 'nope') },
      }),
      -32602,
      'ValidationError',
    );
    assert.match(missing.message, /does not exist/);
    const branch = await rpcError(
      client.call(resourceRegistry.add, {
        definition: { name: 'local/api2', type: 'git-checkout', path: join(work, 'api'), branch: 'nope' },
      }),
      -32602,
      'ValidationError',
    );
    assert.match(branch.message, /branch nope does not exist/);
    await rpcError(
      client.call(resourceRegistry.add, {
        definition: { name: 'local/rel', type: 'fs-directory', path: 'relative/dir' },
      }),
      -32602,
      'ValidationError',
    );
    await rpcError(
      client.raw(resourceRegistry.add.name, { definition: {}, source: { text: '' } }),
      -32602,
      'ValidationError',
    );
    await rpcError(
      client.call(resourceRegistry.add, {
        definition: { name: 'other/x', type: 'fs-directory', path: join(work, 'plain') },
      }),
      -32003,
      'AuthorizationError',
    );
    const ok = await client.call(resourceRegistry.add, {
      definition: { name: 'plain', type: 'fs-directory', path: join(work, 'plain') },
    });
    assert.equal(ok.name, 'local/plain', 'a bare name lands in local/');
  });

  it('updates with optimistic concurrency and refuses a stale revision without writing', async () => {
    const def = parse(fixture('reviewer.actor.yaml')) as Record<string, unknown>;
    const same = await client.call(actorRegistry.update, {
      name: 'local/reviewer',
      definition: def,
      expectedRevision: 1,
    });
    assert.equal(same.unchanged, true);
    assert.equal(same.revision, 1);
    const v2 = await client.call(actorRegistry.update, {
      name: 'local/reviewer',
      definition: { ...def, temperature: 0.5 },
      expectedRevision: 1,
    });
    assert.equal(v2.revision, 2);
    assert.equal(v2.unchanged, false);
    const stale = await rpcError(
      client.call(actorRegistry.update, {
        name: 'local/reviewer',
        definition: { ...def, temperature: 0.9 },
        expectedRevision: 1,
      }),
      -32004,
      'RevisionConflictError',
    );
    assert.match(stale.message, /revision 2, not 1/);
    const now = await client.call(actorRegistry.show, { name: 'local/reviewer' });
    assert.equal(now.revision, 2);
    assert.equal(now.definition['temperature'], 0.5);
    await rpcError(
      client.call(actorRegistry.update, { name: 'local/reviewer', definition: { ...def, name: 'local/renamed' } }),
      -32602,
      'ValidationError',
    );
    await rpcError(
      client.call(actorRegistry.update, { name: 'local/nobody', definition: def }),
      -32001,
      'ResourceNotFoundError',
    );
  });

  it('refuses to remove an entity in use, naming its referrers; --force is explicit', async () => {
    const inUse = await rpcError(
      client.call(resourceRegistry.remove, { name: 'local/api' }),
      -32004,
      'EntityInUseError',
    );
    assert.match(inUse.message, /project local\/api/);
    assert.ok((await client.call(resourceRegistry.show, { name: 'local/api' })).name, 'still there');
    const forced = await client.call(resourceRegistry.remove, { name: 'local/api', force: true });
    assert.deepEqual(forced.danglingReferrers, [{ kind: 'project', name: 'local/api' }]);
    await rpcError(client.call(resourceRegistry.show, { name: 'local/api' }), -32001, 'ResourceNotFoundError');
    await rpcError(client.call(resourceRegistry.remove, { name: 'local/api' }), -32001, 'ResourceNotFoundError');
    const removed = await client.call(actionRegistry.remove, { name: 'local/rename-symbol' });
    assert.equal(removed.removed, true);
  });

  it('lists with filters, regular expressions, paging and a summary', async () => {
    const all = await client.call(toolRegistry.list, {});
    const builtins = (await client.call(toolRegistry.list, { namespace: 'builtin' })).totalSize;
    assert.equal(builtins, 16);
    assert.equal(all.totalSize, builtins + 1);
    assert.deepEqual(all.summary.byNamespace, { builtin: builtins, local: 1 });
    assert.equal(all.summary.byType['command'], 1);
    const commands = await client.call(toolRegistry.list, { type: 'command' });
    assert.deepEqual(
      commands.items.map((t) => t.name),
      ['local/prettier'],
    );
    const re = await client.call(toolRegistry.list, { nameRegex: '-file$' });
    assert.deepEqual(
      re.items.map((t) => t.name),
      ['builtin/edit-file', 'builtin/read-file', 'builtin/write-file'],
    );
    const p1 = await client.call(toolRegistry.list, { pageSize: 6 });
    const p2 = await client.call(toolRegistry.list, { pageSize: 6, pageToken: p1.nextPageToken });
    const p3 = await client.call(toolRegistry.list, { pageSize: 6, pageToken: p2.nextPageToken });
    assert.deepEqual(
      [...p1.items, ...p2.items, ...p3.items].map((t) => t.name),
      all.items.map((t) => t.name),
    );
    assert.equal(p3.nextPageToken, '');
    assert.equal((await client.call(toolRegistry.list, { namespace: 'local' })).totalSize, 1);
    assert.equal((await client.call(toolRegistry.list, { namespace: 'someone-else' })).totalSize, 0);
    await rpcError(client.call(toolRegistry.list, { nameRegex: '(' }), -32602, 'ValidationError');
    await rpcError(client.call(toolRegistry.list, { pageToken: '!!' }), -32602, 'ValidationError');
    ctx.record('registry-list', { p1: { ...p1, nextPageToken: '<t>' }, summary: all.summary });
  });

  it('describes resource types and the flags each takes', async () => {
    const types = await client.call(resourceTypeList, {});
    assert.deepEqual(
      types.types.map((t) => t.type),
      ['git-checkout', 'fs-directory', 'git-remote'],
    );
    const git = await client.call(resourceTypeShow, { type: 'git-checkout' });
    assert.deepEqual(
      git.fields.map((f) => f.flag),
      ['--path', '--branch'],
    );
    const remote = await client.call(resourceTypeShow, { type: 'git-remote' });
    assert.deepEqual(
      remote.fields.map((f) => f.flag),
      ['--url', '--branch', '--credentials', '--push'],
    );
    await rpcError(client.raw(resourceTypeShow.name, { type: 'svn' }), -32602, 'ValidationError');
  });

  it('shows namespaces and members; a foreign namespace is not found', async () => {
    const list = await client.call(namespaceList, {});
    assert.deepEqual(
      list.namespaces.map((n) => [n.name, n.role]),
      [
        ['local', 'owner'],
        ['builtin', 'viewer'],
      ],
    );
    const local = await client.call(namespaceShow, { name: 'local' });
    assert.equal(local.owner, 'local');
    assert.ok((local.entities.tool ?? 0) >= 1);
    const members = await client.call(namespaceMembers, { name: 'local' });
    assert.deepEqual(
      members.members.map((m) => [m.principal, m.role]),
      // A server's administrator (made on its first start) is an owner of local/ too.
      ctx.transport === 'http'
        ? [
            ['admin', 'owner'],
            ['local', 'owner'],
          ]
        : [['local', 'owner']],
    );
    await rpcError(client.call(namespaceShow, { name: 'team-x' }), -32001, 'ResourceNotFoundError');
    await rpcError(client.call(namespaceMembers, { name: 'team-x' }), -32001, 'ResourceNotFoundError');
    await rpcError(client.call(namespaceShow, { name: 'Bad Name' }), -32602, 'ValidationError');
    ctx.record('namespaces', {
      list,
      // Over HTTP the server's administrator is a member too.
      local: { ...local, createdAt: '<t>', memberCount: '<n>' },
      members: members.members.filter((m) => m.principal === 'local').map((m) => m.role),
    });
  });

  it('opens sessions with registered actors, built-in models and LLM providers alike', async () => {
    await client.call(actorRegistry.add, {
      definition: { name: 'local/parrot', provider: 'builtin', model: 'echo', description: 'echo under another name' },
    });
    const s = await client.call(sessionCreate, { actor: 'local/parrot' });
    assert.equal(s.actor, 'local/parrot');
    // An LLM actor holds a chat too (its turns say when its key or endpoint is missing).
    assert.equal((await client.call(sessionCreate, { actor: 'local/reviewer' })).actor, 'local/reviewer');
    const unknown = await rpcError(
      client.call(sessionCreate, { actor: 'local/nobody' }),
      -32001,
      'ResourceNotFoundError',
    );
    // The hint names the caller's own actors as well as the built-in ones.
    assert.match(unknown.hint ?? '', /^available actors: builtin\/echo, .*\blocal\/parrot\b/);
    await rpcError(
      client.call(actorRegistry.add, { definition: { name: 'local/bad', provider: 'builtin', model: 'gpt-9' } }),
      -32602,
      'ValidationError',
    );
  });

  it('runs add, list, show, update and remove on every registry', async () => {
    const defs = [
      [actorRegistry, { name: 'local/cycle-actor', provider: 'builtin', model: 'echo' }],
      [
        toolRegistry,
        {
          name: 'local/cycle-tool',
          source: 'command',
          command: { program: 'true' },
          inputSchema: { type: 'object' },
          readOnly: true,
          writes: false,
        },
      ],
      [skillRegistry, { name: 'local/cycle-skill', tools: ['builtin/read-file', 'local/cycle-tool'] }],
      [resourceRegistry, { name: 'local/cycle-resource', type: 'fs-directory', path: join(work, 'plain') }],
      [
        automationProfileRegistry,
        { name: 'local/cycle-profile', default: 'ask', rules: [{ command: 'npm test', decision: 'allow' }] },
      ],
      [
        projectRegistry,
        {
          name: 'local/cycle-project',
          resources: ['local/cycle-resource'],
          settings: { automationProfile: 'local/cycle-profile' },
        },
      ],
      [
        actionRegistry,
        {
          name: 'local/cycle-action',
          descriptionTemplate: 'do it',
          definitionOfDone: 'done',
          steps: [{ tool: 'local/cycle-tool' }],
        },
      ],
    ] as const;
    for (const [reg, def] of defs) {
      const rows: RegistryContracts = reg;
      assert.equal((await client.call(rows.add, { definition: def })).revision, 1);
      const listed = await client.call(rows.list, { nameRegex: '^local/cycle-' });
      assert.deepEqual(
        listed.items.map((e) => e.name),
        [def.name],
      );
      assert.equal((await client.call(rows.show, { name: def.name })).definition.name, def.name);
      const updated = await client.call(rows.update, {
        name: def.name,
        definition: { ...def, description: 'second revision' },
        expectedRevision: 1,
      });
      assert.equal(updated.revision, 2);
    }
    for (const [reg, def] of [...defs].reverse()) {
      const rows: RegistryContracts = reg;
      assert.equal((await client.call(rows.remove, { name: def.name })).removed, true);
      assert.equal((await client.call(rows.list, { nameRegex: '^local/cycle-' })).totalSize, 0);
    }
  });

  it('automation profiles: built-ins as before, located errors, a project refers to one, remove refused while used', async () => {
    const builtins = await client.call(automationProfileRegistry.list, { namespace: 'builtin' });
    assert.deepEqual(
      builtins.items.map((e) => [e.name, e.definition['default'], e.definition['applyApproval']]),
      [
        ['builtin/auto', 'allow', false],
        ['builtin/manual', 'ask', true],
        ['builtin/trusted', 'allow', true],
      ],
    );
    const text = [
      'name: local/guarded',
      'default: allow',
      'rules:',
      '  - command: "rm -rf *"',
      '    decision: deny',
      '  - command: "git *"',
      '    decision: perhaps',
      '  - reason: matches everything',
      '    decision: ask',
      'colour: red',
      '',
    ].join('\n');
    const bad = await rpcError(
      client.call(automationProfileRegistry.add, { source: { text, filename: 'guarded.yaml' } }),
      -32602,
      'ValidationError',
    );
    assert.deepEqual(
      bad.fieldViolations.map((f) => [f.field, (f as { line?: number }).line, f.description]),
      [
        ['rules[1].decision', 7, 'must be allow, ask or deny'],
        ['rules[2].decision', 9, 'a rule matches on tool, command or writes (for every call, set the profile default)'],
        ['colour', 10, 'is not a field of an automation-profile definition'],
      ],
    );
    await rpcError(
      client.call(automationProfileRegistry.show, { name: 'local/guarded' }),
      -32001,
      'ResourceNotFoundError',
    );
    const good = text
      .replace('perhaps', 'ask')
      .replace('  - reason: matches everything\n    decision: ask\n', '')
      .replace('colour: red\n', '');
    assert.equal(
      (await client.call(automationProfileRegistry.add, { source: { text: good, filename: 'guarded.yaml' } })).revision,
      1,
    );
    await client.call(resourceRegistry.add, {
      definition: { name: 'local/guarded-r', type: 'fs-directory', path: join(work, 'plain') },
    });
    const noSuch = await rpcError(
      client.call(projectRegistry.add, {
        definition: {
          name: 'local/guarded-p',
          resources: ['local/guarded-r'],
          settings: { automationProfile: 'local/nope' },
        },
      }),
      -32602,
      'ValidationError',
    );
    assert.match(noSuch.message, /settings\.automationProfile: no automation-profile named local\/nope/);
    await client.call(projectRegistry.add, {
      definition: {
        name: 'local/guarded-p',
        resources: ['local/guarded-r'],
        settings: { automationProfile: 'guarded' },
      },
    });
    const shown = await client.call(automationProfileRegistry.show, { name: 'local/guarded' });
    assert.deepEqual(shown.derived, {
      default: 'allow',
      applyApproval: true,
      rules: 2,
      usedBy: [{ kind: 'project', name: 'local/guarded-p' }],
    });
    const inUse = await rpcError(
      client.call(automationProfileRegistry.remove, { name: 'local/guarded' }),
      -32004,
      'EntityInUseError',
    );
    assert.match(inUse.message, /automation-profile local\/guarded is used by project local\/guarded-p/);
    // A built-in named by its short name is a reference too.
    await client.call(projectRegistry.update, {
      name: 'local/guarded-p',
      definition: {
        name: 'local/guarded-p',
        resources: ['local/guarded-r'],
        settings: { automationProfile: 'manual' },
      },
    });
    const manual = await client.call(automationProfileRegistry.show, { name: 'builtin/manual' });
    assert.deepEqual(manual.derived['usedBy'], [{ kind: 'project', name: 'local/guarded-p' }]);
    assert.equal((await client.call(automationProfileRegistry.remove, { name: 'local/guarded' })).removed, true);
    await client.call(projectRegistry.remove, { name: 'local/guarded-p' });
    await client.call(resourceRegistry.remove, { name: 'local/guarded-r' });
    ctx.record('automation-profile-invalid', bad.fieldViolations);
  });

  it('hooks: located errors, exactly one of command or webhook, a project refers to one, list by event, remove', async () => {
    const text = [
      'name: local/guard',
      'event: before-tool-call',
      'tools: [builtin/*]',
      'command: { program: /bin/true }',
      'webhook: { url: "ftp://example.com/x" }',
      'timeoutSeconds: 900',
      '',
    ].join('\n');
    const bad = await rpcError(
      client.call(hookRegistry.add, { source: { text, filename: 'guard.yaml' } }),
      -32602,
      'ValidationError',
    );
    assert.deepEqual(
      bad.fieldViolations.map((f) => [f.field, (f as { line?: number }).line, f.description]),
      [
        ['command', 4, 'give exactly one of command (a program to run) or webhook (a URL to POST to)'],
        ['webhook.url', 5, 'must be an http:// or https:// URL'],
        ['timeoutSeconds', 6, 'must be between 1 and 600'],
      ],
    );
    const both = await rpcError(
      client.call(hookRegistry.add, {
        definition: {
          name: 'local/guard',
          event: 'after-apply',
          tools: ['x/*'],
          command: { program: '/bin/true' },
          webhook: { url: 'https://example.com/h' },
        },
      }),
      -32602,
      'ValidationError',
    );
    assert.deepEqual(
      both.fieldViolations.map((f) => [f.field, f.description]),
      [
        ['command', 'give exactly one of command (a program to run) or webhook (a URL to POST to)'],
        ['tools', 'only before-tool-call and after-tool-call hooks take tools (this one is after-apply)'],
      ],
    );
    const noSuch = await rpcError(
      client.call(hookRegistry.add, {
        definition: {
          name: 'local/guard',
          event: 'before-apply',
          project: 'local/nope',
          command: { program: '/bin/true' },
        },
      }),
      -32602,
      'ValidationError',
    );
    assert.match(noSuch.message, /project: no project named local\/nope/);
    await client.call(resourceRegistry.add, {
      definition: { name: 'local/hooked-r', type: 'fs-directory', path: join(work, 'plain') },
    });
    await client.call(projectRegistry.add, { definition: { name: 'local/hooked-p', resources: ['local/hooked-r'] } });
    const added = await client.call(hookRegistry.add, {
      definition: {
        name: 'local/guard',
        event: 'before-tool-call',
        project: 'local/hooked-p',
        tools: ['builtin/*'],
        command: { program: '/bin/true', args: ['x'] },
      },
    });
    assert.equal(added.revision, 1);
    await client.call(hookRegistry.add, {
      definition: {
        name: 'local/notify',
        event: 'after-apply',
        webhook: { url: 'https://example.com/h?token=secret' },
      },
    });
    const shown = await client.call(hookRegistry.show, { name: 'local/notify' });
    assert.deepEqual(shown.derived, {
      event: 'after-apply',
      scope: 'global',
      projectExists: true,
      runs: 'webhook',
      target: 'https://example.com',
      tools: [],
      timeoutSeconds: 10,
      vetoes: false,
      usedBy: [],
    });
    const byEvent = await client.call(hookRegistry.list, { type: 'before-tool-call' });
    assert.deepEqual(
      byEvent.items.map((e) => e.name),
      ['local/guard'],
    );
    const inUse = await rpcError(
      client.call(projectRegistry.remove, { name: 'local/hooked-p' }),
      -32004,
      'EntityInUseError',
    );
    assert.match(inUse.message, /project local\/hooked-p is used by hook local\/guard/);
    const updated = await client.call(hookRegistry.update, {
      name: 'local/guard',
      definition: { ...added.definition, timeoutSeconds: 30 },
      expectedRevision: 1,
    });
    assert.equal(updated.revision, 2);
    for (const name of ['local/guard', 'local/notify'])
      assert.equal((await client.call(hookRegistry.remove, { name })).removed, true);
    await client.call(projectRegistry.remove, { name: 'local/hooked-p' });
    await client.call(resourceRegistry.remove, { name: 'local/hooked-r' });
    ctx.record('hook-invalid', bad.fieldViolations);
  });

  it('publishes an OpenRPC document with a schema for every method', async () => {
    const doc = (await client.call(rpcDiscover, {})) as unknown as {
      openrpc: string;
      methods: Array<{ name: string; params: unknown[]; result: { schema: unknown } }>;
    };
    assert.equal(doc.openrpc, '1.3.2');
    assert.deepEqual(doc.methods.map((m) => m.name).sort(), CONTRACTS.map((m) => m.name).sort());
    assert.ok(doc.methods.every((m) => Array.isArray(m.params) && m.result.schema));
  });
}
