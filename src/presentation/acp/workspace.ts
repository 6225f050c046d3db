/**
 * Which project an editor's workspace is: the registered project whose first resource (where a
 * session's file tools work) is the session's cwd, unless the command or `_meta` names one.
 */
import type { A2AClient } from '../../protocol/client/index.ts';
import { sessionParams, type SessionChoice } from '../cli/commands/session.command.ts';
import { canonical, listAll } from '../cli/init/current-project.ts';

export { canonical };

/** The command's --actor, --project and --skill. */
export type SessionDefaults = Omit<SessionChoice, 'session'>;

/** What `session/new` creates: sessionCreate's params, and the directory its tools work in (if any). */
export interface Workspace {
  params: ReturnType<typeof sessionParams>;
  root: string | undefined;
  /** How the project was chosen (for the log). */
  matched?: string;
}

/** `_meta.cleveragents` of `session/new`: `{actor?, project?, skills?, title?}`, each beating the command's flags. */
function metaChoice(meta: Record<string, unknown> | null | undefined): SessionDefaults & { title?: string } {
  const m = meta?.['cleveragents'];
  if (!m || typeof m !== 'object') return {};
  const o = m as Record<string, unknown>;
  const out: SessionDefaults & { title?: string } = {};
  for (const k of ['actor', 'project', 'title'] as const) {
    const v = o[k];
    if (typeof v === 'string') out[k] = v;
  }
  const skills = Array.isArray(o['skills']) ? o['skills'].filter((x): x is string => typeof x === 'string') : [];
  if (skills.length) out.skill = skills;
  return out;
}

export async function workspaceOf(
  client: A2AClient,
  cwd: string,
  defaults: SessionDefaults,
  meta: Record<string, unknown> | null | undefined,
): Promise<Workspace> {
  const choice = { ...defaults, ...metaChoice(meta) };
  const params = sessionParams(choice);
  const { projects, roots } = await projectRoots(client);
  if (params.project) return { params, root: roots.get(params.project) };
  const here = canonical(cwd);
  const matches = projects.filter((p) => roots.get(p) !== undefined && canonical(roots.get(p) ?? '') === here);
  const project = matches[0];
  if (!project) return { params, root: undefined };
  return { params: { ...params, project }, root: roots.get(project), matched: project };
}

/** Where a session's project's tools work (its first resource's path); undefined without a project. */
export async function projectRootOf(client: A2AClient, project: string | undefined): Promise<string | undefined> {
  if (!project) return undefined;
  return (await projectRoots(client)).roots.get(project);
}

/** Every project (by name, sorted) and the path of its first resource. */
export async function projectRoots(client: A2AClient): Promise<{ projects: string[]; roots: Map<string, string> }> {
  const paths = new Map<string, string>();
  for (const r of await listAll(client, 'resource'))
    if (r.definition.type !== 'git-remote') paths.set(r.name, r.definition.path);
  const roots = new Map<string, string>();
  const projects: string[] = [];
  for (const p of await listAll(client, 'project')) {
    projects.push(p.name);
    const first = p.definition.resources[0];
    const path = first ? paths.get(first) : undefined;
    if (path) roots.set(p.name, path);
  }
  return { projects: projects.sort(), roots };
}
