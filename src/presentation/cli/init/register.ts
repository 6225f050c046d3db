/**
 * What `agents init` writes to the registry: the actor (added, or updated when it exists) and, in a
 * git repository, a resource and a project for it (reused when one already has this directory).
 * Re-running init edits; it never makes a second actor, resource or project for the same thing.
 */
import { basename } from 'node:path';
import { REGISTRIES, type A2AClient } from '../../../protocol/client/index.ts';
import { listAll } from './current-project.ts';
import type { Choice } from './choose-endpoint.ts';

/** The registry calls init makes (declared on the command). */
export const INIT_CALLS = [
  REGISTRIES.actor.list,
  REGISTRIES.actor.add,
  REGISTRIES.actor.update,
  REGISTRIES.resource.list,
  REGISTRIES.resource.add,
  REGISTRIES.project.list,
  REGISTRIES.project.add,
] as const;

/** The built-in tools an init actor gets: read files, edit them, run commands (`agents tool list`). */
export const INIT_TOOLS = ['builtin/read', 'builtin/edit', 'builtin/bash'] as const;

/** The actor definition of a choice (an Ollama is an OpenAI-compatible endpoint with no key). */
export function actorDefinition(c: Choice): Record<string, unknown> {
  const provider = c.endpoint.provider === 'ollama' ? 'openai-compatible' : c.endpoint.provider;
  return {
    name: c.name,
    description: `Set up by agents init: ${c.model} (${c.endpoint.provider})`,
    provider,
    model: c.model,
    baseUrl: c.endpoint.baseUrl,
    ...(c.endpoint.apiKeyEnv ? { apiKeyEnv: c.endpoint.apiKeyEnv } : {}),
    tools: [...INIT_TOOLS],
  };
}

/** Adds the actor, or updates it when one of that name exists; says which. */
export async function upsertActor(
  client: A2AClient,
  c: Choice,
  signal: AbortSignal,
): Promise<{ name: string; revision: number; action: 'added' | 'updated' | 'unchanged' }> {
  const definition = actorDefinition(c);
  const existing = (await listAll(client, 'actor', signal)).find((a) => a.name === c.name);
  if (!existing) {
    const e = await client.call(REGISTRIES.actor.add, { definition }, { signal });
    return { name: e.name, revision: e.revision, action: 'added' };
  }
  const e = await client.call(
    REGISTRIES.actor.update,
    { name: c.name, expectedRevision: existing.revision, definition },
    { signal },
  );
  return { name: e.name, revision: e.revision, action: e.unchanged ? 'unchanged' : 'updated' };
}

/** A registry name from a directory's name: lowercase, letters first, other characters as `-`. */
export function slugOf(dir: string): string {
  const s = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, 50)
    .replace(/-+$/, '');
  return s || 'repo';
}

/** The first `local/<base>`, `local/<base>-2`, … not taken. */
const freeName = (base: string, taken: ReadonlySet<string>): string => {
  for (let i = 1; ; i++) {
    const name = `local/${base}${i === 1 ? '' : `-${i}`}`;
    if (!taken.has(name)) return name;
  }
};

/** Registers the repository at `top` as a git-checkout resource and a project of it, reusing what exists. */
export async function ensureProject(
  client: A2AClient,
  top: string,
  signal: AbortSignal,
): Promise<{ project: string; resource: string; action: 'added' | 'existing' }> {
  const resources = await listAll(client, 'resource', signal);
  let resource = resources.find((r) => r.definition.type !== 'git-remote' && r.definition.path === top)?.name;
  const projects = await listAll(client, 'project', signal);
  const existing = resource ? projects.find((p) => p.definition.resources.includes(resource ?? '')) : undefined;
  if (existing && resource) return { project: existing.name, resource, action: 'existing' };
  const slug = slugOf(top);
  if (!resource) {
    const name = freeName(slug, new Set(resources.map((r) => r.name)));
    resource = (
      await client.call(
        REGISTRIES.resource.add,
        { definition: { name, type: 'git-checkout', path: top, description: `${basename(top)} (agents init)` } },
        { signal },
      )
    ).name;
  }
  const name = freeName(slug, new Set(projects.map((p) => p.name)));
  const project = await client.call(
    REGISTRIES.project.add,
    { definition: { name, resources: [resource], description: `${basename(top)} (agents init)` } },
    { signal },
  );
  return { project: project.name, resource, action: 'added' };
}
