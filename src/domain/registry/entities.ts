/**
 * Registry definitions (DESIGN.md §4.2): what a user writes in a YAML or JSON file, validated
 * strictly. Each kind declares which other entities it refers to, so removal can refuse an entity
 * still in use and name its referrers.
 */
import { HookDefinition } from './hook.ts';
import { ActionDefinition } from './action.definition.ts';
import { ActorDefinition } from './actor.definition.ts';
import { AutomationProfileDefinition } from './automation-profile.definition.ts';
import { ProjectDefinition, profileEntityName } from './project.definition.ts';
import { ResourceDefinition } from './resource.definition.ts';
import { SkillDefinition } from './skill.definition.ts';
import { ToolDefinition } from './tool.definition.ts';

export const REGISTRY_KINDS = [
  'actor',
  'tool',
  'skill',
  'resource',
  'project',
  'action',
  'automation-profile',
  'hook',
] as const;
export type RegistryKind = (typeof REGISTRY_KINDS)[number];
export const PLURAL: Record<RegistryKind, string> = {
  actor: 'actors',
  tool: 'tools',
  skill: 'skills',
  resource: 'resources',
  project: 'projects',
  action: 'actions',
  'automation-profile': 'automation-profiles',
  hook: 'hooks',
};

export { HookDefinition };

export const DEFINITION_SCHEMAS = {
  actor: ActorDefinition,
  tool: ToolDefinition,
  skill: SkillDefinition,
  resource: ResourceDefinition,
  project: ProjectDefinition,
  action: ActionDefinition,
  'automation-profile': AutomationProfileDefinition,
  hook: HookDefinition,
} as const;

export type Definition =
  | ActorDefinition
  | ToolDefinition
  | SkillDefinition
  | ResourceDefinition
  | ProjectDefinition
  | ActionDefinition
  | AutomationProfileDefinition
  | HookDefinition;

/** A reference from one entity to another, with where it is written. */
export interface Reference {
  kind: RegistryKind;
  name: string;
  path: (string | number)[];
}

/** The entities a definition refers to. */
export function referencesOf(kind: RegistryKind, d: Definition): Reference[] {
  const refs: Reference[] = [];
  const add = (k: RegistryKind, names: string[] | undefined, path: string): void =>
    names?.forEach((name, i) => refs.push({ kind: k, name, path: [path, i] }));
  const one = (k: RegistryKind, name: string | undefined, path: (string | number)[]): void => {
    if (name) refs.push({ kind: k, name, path });
  };
  switch (kind) {
    case 'actor': {
      const a = d as ActorDefinition;
      add('skill', a.skills, 'skills');
      add('tool', a.tools, 'tools');
      one('actor', a.compaction?.summarizer, ['compaction', 'summarizer']);
      add('actor', a.fallbacks, 'fallbacks');
      break;
    }
    case 'skill': {
      const s = d as SkillDefinition;
      add('tool', s.tools, 'tools');
      add('skill', s.includes, 'includes');
      break;
    }
    case 'project': {
      const p = d as ProjectDefinition;
      add('resource', p.resources, 'resources');
      one('actor', p.settings?.strategyActor, ['settings', 'strategyActor']);
      one('actor', p.settings?.executionActor, ['settings', 'executionActor']);
      const profile = p.settings?.automationProfile;
      if (typeof profile === 'string')
        one('automation-profile', profileEntityName(profile), ['settings', 'automationProfile']);
      break;
    }
    case 'action': {
      const a = d as ActionDefinition;
      one('actor', a.strategyActor, ['strategyActor']);
      one('actor', a.executionActor, ['executionActor']);
      a.steps?.forEach((s, i) => one('tool', s.tool, ['steps', i, 'tool']));
      break;
    }
    case 'hook':
      one('project', (d as HookDefinition).project, ['project']);
      break;
    default:
      break;
  }
  return refs;
}

/** A stored definition with its bookkeeping. */
export interface RegistryEntity<D extends Definition = Definition> {
  kind: RegistryKind;
  name: string;
  namespace: string;
  revision: number;
  contentHash: string;
  createdAt: string;
  updatedAt: string;
  builtin: boolean;
  definition: D;
}
