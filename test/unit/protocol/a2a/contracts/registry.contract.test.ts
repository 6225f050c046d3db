/**
 * Each registry row's result schemas are the whole contract: what the registry service answers
 * for each kind is valid under that kind's row (definition and derived facts included), and a
 * result of the wrong shape is refused by it. Runs the real service over in-memory fakes of its
 * ports.
 */
import { localCapabilities } from '../../../../support/capabilities.ts';
import {
  gitTreeInspector as inspector,
  localOnlyNamespaces as namespaces,
  MemoryRegistry,
} from '../../../../support/fakes/registry.ts';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { z } from 'zod';
import { LOCAL_PRINCIPAL } from '../../../../../src/application/ports/principal.ts';
import { NamespaceService } from '../../../../../src/application/registry/namespace.service.ts';
import { RegistryService, type ShownEntity } from '../../../../../src/application/registry/registry.service.ts';
import {
  BUILTIN_ACTIONS,
  BUILTIN_ACTOR_DEFINITIONS,
  BUILTIN_TOOLS,
} from '../../../../../src/domain/registry/builtins.ts';
import { REGISTRY_KINDS, type RegistryKind } from '../../../../../src/domain/registry/entities.ts';
import { REGISTRIES } from '../../../../../src/protocol/a2a/contracts/registry.contract.ts';

function service(): RegistryService {
  const repo = new MemoryRegistry();
  return new RegistryService({
    repo,
    namespaces: new NamespaceService(namespaces, repo, () => ({})),
    inspector,
    capabilities: localCapabilities(inspector),
    builtins: { tool: BUILTIN_TOOLS, action: BUILTIN_ACTIONS, actor: BUILTIN_ACTOR_DEFINITIONS },
    builtinModels: ['echo', 'conformance'],
  });
}

/** One definition of each kind, referring to one another (the order adds referents first). */
const DEFINITIONS: Array<[RegistryKind, Record<string, unknown>]> = [
  [
    'tool',
    {
      name: 'local/prettier',
      source: 'command',
      command: { program: 'npx', args: ['prettier', '--write'] },
      inputSchema: { type: 'object' },
      readOnly: false,
      writes: true,
    },
  ],
  [
    'skill',
    {
      name: 'local/shell',
      tools: ['builtin/list-files', 'local/prettier'],
      mcpServers: [{ name: 'filesystem', command: 'npx' }],
    },
  ],
  ['actor', { name: 'local/reviewer', provider: 'builtin', model: 'echo', skills: ['local/shell'] }],
  ['resource', { name: 'local/api', type: 'git-checkout', path: '/work/api', branch: 'main' }],
  ['project', { name: 'local/api', resources: ['local/api'], settings: { strategyActor: 'local/reviewer' } }],
  [
    'action',
    {
      name: 'local/format',
      arguments: { glob: { type: 'string', default: 'src/**' }, check: { type: 'boolean', required: true } },
      descriptionTemplate: 'Format {{glob}}',
      definitionOfDone: 'formatted',
      steps: [{ tool: 'local/prettier', args: { paths: ['{{glob}}'] } }],
    },
  ],
  [
    'automation-profile',
    {
      name: 'local/careful',
      default: 'ask',
      rules: [{ command: 'rm *', decision: 'deny', reason: 'never delete' }],
    },
  ],
  [
    'hook',
    {
      name: 'local/guard',
      event: 'before-tool-call',
      project: 'local/api',
      tools: ['builtin/*'],
      command: { program: '/bin/true' },
    },
  ],
];

/** What the service serves for each kind, typed per kind. */
type Served = { [K in RegistryKind]: ShownEntity<K> };
/** What each kind's show row promises to a client. */
type Wire = { [K in RegistryKind]: z.input<(typeof REGISTRIES)[K]['show']['result']> };
// Compile-time half of the contract: this does not build if a kind's service result and its row
// disagree (the binding in registry.methods.ts is generic over the kind and cannot check it).
const asWire = (served: Served): Wire => served;

const NAMES: Record<RegistryKind, string> = {
  tool: 'local/prettier',
  skill: 'local/shell',
  actor: 'local/reviewer',
  resource: 'local/api',
  project: 'local/api',
  action: 'local/format',
  'automation-profile': 'local/careful',
  hook: 'local/guard',
};

/** A JSON copy, as a client receives it. */
const wire = <T>(v: T): Record<string, unknown> => JSON.parse(JSON.stringify(v)) as Record<string, unknown>;

describe('registry result schemas', () => {
  const svc = service();
  let shown: Wire;

  before(async () => {
    for (const [kind, definition] of DEFINITIONS) {
      const added = await svc.add(kind, { definition }, LOCAL_PRINCIPAL);
      const r = REGISTRIES[kind].add.result.safeParse(wire(added));
      assert.ok(r.success, `${kind} add: ${JSON.stringify(r.error?.issues)}`);
    }
    const show = <K extends RegistryKind>(kind: K): Promise<ShownEntity<K>> =>
      svc.show(kind, NAMES[kind], LOCAL_PRINCIPAL);
    shown = asWire({
      actor: await show('actor'),
      tool: await show('tool'),
      skill: await show('skill'),
      resource: await show('resource'),
      project: await show('project'),
      action: await show('action'),
      'automation-profile': await show('automation-profile'),
      hook: await show('hook'),
    });
  });

  it("validates a show result of every kind by that kind's show row", () => {
    for (const kind of REGISTRY_KINDS) {
      const r = REGISTRIES[kind].show.result.safeParse(wire(shown[kind]));
      assert.ok(r.success, `${kind}: ${JSON.stringify(r.error?.issues)}`);
    }
    // The facts are the kind's own, not a loose record.
    assert.deepEqual(shown.skill.derived.tools, [
      { name: 'builtin/list-files', readOnly: true, writes: false, via: 'direct' },
      { name: 'local/prettier', readOnly: false, writes: true, via: 'direct' },
    ]);
    assert.deepEqual(shown.project.derived.resources, [
      { name: 'local/api', type: 'git-checkout', path: '/work/api', exists: true },
    ]);
    assert.deepEqual(shown.action.derived.arguments, [
      { name: 'glob', type: 'string', required: false, default: 'src/**' },
      { name: 'check', type: 'boolean', required: true },
    ]);
    assert.deepEqual(shown.tool.derived.usedBy, [
      { kind: 'skill', name: 'local/shell' },
      { kind: 'action', name: 'local/format' },
    ]);
  });

  it("validates list and update results of every kind by that kind's rows", async () => {
    for (const [kind, definition] of DEFINITIONS) {
      const page = await svc.list(kind, {}, LOCAL_PRINCIPAL);
      assert.ok(page.items.length > 0, `${kind}: listed`);
      const listed = REGISTRIES[kind].list.result.safeParse(wire(page));
      assert.ok(listed.success, `${kind} list: ${JSON.stringify(listed.error?.issues)}`);
      const updated = await svc.update(kind, NAMES[kind], { definition }, undefined, LOCAL_PRINCIPAL);
      assert.equal(updated.unchanged, true);
      const u = REGISTRIES[kind].update.result.safeParse(wire(updated));
      assert.ok(u.success, `${kind} update: ${JSON.stringify(u.error?.issues)}`);
    }
  });

  /** The paths of the issues a row's show schema finds in a result. */
  const refusals = (kind: RegistryKind, result: unknown): string[] => {
    const r = REGISTRIES[kind].show.result.safeParse(result);
    assert.equal(r.success, false, `${kind} accepted ${JSON.stringify(result)}`);
    return (r.error?.issues ?? []).map((i) => i.path.join('.'));
  };

  it('refuses a show result whose derived facts have the wrong shape', () => {
    const skill = wire(shown.skill);
    const derived = wire(shown.skill.derived);
    const tools = [{ ...wire(shown.skill.derived.tools[0]), readOnly: 'yes' }];
    assert.deepEqual(refusals('skill', { ...skill, derived: { ...derived, tools } }), ['derived.tools.0.readOnly']);
    assert.deepEqual(refusals('skill', { ...skill, derived: { ...derived, usedBy: undefined } }), ['derived.usedBy']);
    assert.deepEqual(refusals('skill', { ...skill, derived: { ...derived, mcpServers: 'filesystem' } }), [
      'derived.mcpServers',
    ]);
    const project = wire(shown.project);
    assert.deepEqual(refusals('project', { ...project, derived: { resources: [{ name: 'local/api' }], usedBy: [] } }), [
      'derived.resources.0',
    ]);
    const action = wire(shown.action);
    assert.ok(
      refusals('action', { ...action, derived: { ...wire(shown.action.derived), steps: -1 } }).includes(
        'derived.steps',
      ),
    );
  });

  it("refuses another kind's derived facts, definition or kind", () => {
    const skill = wire(shown.skill);
    // An actor's facts (its skills and tool names, whether it runs) name no MCP servers or their tools.
    assert.deepEqual(refusals('skill', { ...skill, derived: wire(shown.actor.derived) }), [
      'derived.mcpServers',
      'derived.mcpTools',
      'derived.mcpProblems',
    ]);
    // A tool's facts are no project's: no resources.
    assert.deepEqual(refusals('project', { ...wire(shown.project), derived: wire(shown.tool.derived) }), [
      'derived.resources',
    ]);
    const tool = wire(shown.tool);
    assert.deepEqual(refusals('tool', { ...tool, kind: 'skill' }), ['kind']);
    assert.ok(refusals('tool', { ...tool, definition: wire(shown.actor.definition) }).includes('definition'));
  });
});
