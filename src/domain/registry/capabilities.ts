/**
 * Capabilities (issue #35): some registry fields are not data — they make the server run a program,
 * open a host path, read one of its own secrets or connect somewhere. This module says which
 * fields of a definition need which capability; the registry service checks them against what a
 * server administrator granted the definition's namespace, on add, update and sync push, and again
 * whenever the definition is used.
 */
import type { ActionDefinition } from './action.definition.ts';
import type { ActorDefinition } from './actor.definition.ts';
import type { Definition, RegistryKind } from './entities.ts';
import type { ProjectDefinition } from './project.definition.ts';
import type { ResourceDefinition } from './resource.definition.ts';
import { GIT_REMOTE_DEFAULT_PORT } from './git-remote-url.ts';
import type { SkillDefinition } from './skill.definition.ts';
import type { ToolDefinition } from './tool.definition.ts';
import type { HookDefinition } from './hook.ts';

export const CAPABILITIES = ['runs-program', 'host-path', 'server-secret', 'private-network'] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** What each capability lets a definition make the server do (for refusals, `namespace grants`, docs). */
export const CAPABILITY_MEANING: Readonly<Record<Capability, string>> = {
  'runs-program': 'makes the server run a program',
  'host-path': "opens a host path outside the namespace's workspace",
  'server-secret': "reads one of the server's own secrets (an environment variable or a file)",
  'private-network': 'connects to loopback, private or link-local addresses (or gives commands the host network)',
};

/**
 * One field that needs a capability. `target` is what the field names (a program, a path, a
 * variable, a URL) for the refusal's text. A `url` need holds only when the URL turns out to reach
 * a refused address (the application resolves it); a `path` need only when the path lies outside
 * the namespace's workspace.
 */
export interface CapabilityNeed {
  capability: Capability;
  /** Where it is written in the definition (`mcpServers[0].command`). */
  path: (string | number)[];
  target: string;
  /** `url`: needs private-network only if the URL reaches a refused address; `path`: host-path only outside the workspace. */
  when?: 'url' | 'path';
  /** `url`: schemes the field may use besides http(s), with their default ports (a git-remote's `git:`). */
  schemes?: Readonly<Record<string, number>>;
}

/** The program a verify command line runs (its first word). */
const firstWord = (commandLine: string): string => commandLine.trim().split(/\s+/)[0] ?? commandLine;

/** Every field of a definition that needs a capability. */
export function capabilityNeeds(kind: RegistryKind, d: Definition): CapabilityNeed[] {
  const out: CapabilityNeed[] = [];
  const need = (capability: Capability, path: (string | number)[], target: string, when?: 'url' | 'path'): void => {
    out.push({ capability, path, target, ...(when ? { when } : {}) });
  };
  switch (kind) {
    case 'actor': {
      const a = d as ActorDefinition;
      if (a.apiKeyEnv !== undefined) need('server-secret', ['apiKeyEnv'], a.apiKeyEnv);
      if (a.apiKeyFile !== undefined) need('server-secret', ['apiKeyFile'], a.apiKeyFile);
      if (a.baseUrl !== undefined) need('private-network', ['baseUrl'], a.baseUrl, 'url');
      break;
    }
    case 'tool': {
      const t = d as ToolDefinition;
      if (t.command) need('runs-program', ['command', 'program'], t.command.program);
      break;
    }
    case 'skill': {
      const s = d as SkillDefinition;
      s.mcpServers?.forEach((m, i) => {
        if ('command' in m) {
          need('runs-program', ['mcpServers', i, 'command'], m.command);
          if (m.cwd !== undefined) need('host-path', ['mcpServers', i, 'cwd'], m.cwd, 'path');
        } else need('private-network', ['mcpServers', i, 'url'], m.url, 'url');
      });
      break;
    }
    case 'resource': {
      const r = d as ResourceDefinition;
      // A git-remote is cloned by the server: its URL is an outbound connection like any other.
      if (r.type === 'git-remote')
        out.push({
          capability: 'private-network',
          path: ['url'],
          target: r.url,
          when: 'url',
          schemes: { git: GIT_REMOTE_DEFAULT_PORT.git },
        });
      else need('host-path', ['path'], r.path, 'path');
      break;
    }
    case 'project': {
      const p = d as ProjectDefinition;
      if (p.settings?.verify)
        need('runs-program', ['settings', 'verify', 'command'], firstWord(p.settings.verify.command));
      if (p.settings?.network === 'allow') need('private-network', ['settings', 'network'], 'the host network');
      break;
    }
    case 'action': {
      const a = d as ActionDefinition;
      if (a.verify) need('runs-program', ['verify', 'command'], firstWord(a.verify.command));
      if (a.network === 'allow') need('private-network', ['network'], 'the host network');
      break;
    }
    case 'hook': {
      const h = d as HookDefinition;
      if (h.command) need('runs-program', ['command', 'program'], h.command.program);
      if (h.webhook) need('private-network', ['webhook', 'url'], h.webhook.url, 'url');
      break;
    }
    default:
      break;
  }
  return out;
}

/** `mcpServers[0].command` from `['mcpServers', 0, 'command']`. */
export function fieldName(path: ReadonlyArray<string | number>): string {
  return path.reduce<string>((acc, k) => (typeof k === 'number' ? `${acc}[${k}]` : acc ? `${acc}.${k}` : k), '');
}
