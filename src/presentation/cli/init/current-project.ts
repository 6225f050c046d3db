/**
 * The registered project of a directory, and the actor/project a new session gets when the command
 * names none: what makes `agents chat` in a repository work on that repository, as every coding
 * agent does.
 */
import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import {
  REGISTRIES,
  type A2AClient,
  type RegistryEntityOf,
  type RegistryKind,
  type RegistryPageOf,
} from '../../../protocol/client/index.ts';
import type { RunContext } from '../runner.ts';

/** The registry calls a command makes to find the current directory's project (declare them with `.calls`). */
export const CURRENT_PROJECT_CALLS = [REGISTRIES.resource.list, REGISTRIES.project.list] as const;

/** Every entity of a kind the caller sees (all pages). */
export async function listAll<K extends RegistryKind>(
  client: A2AClient,
  kind: K,
  signal?: AbortSignal,
): Promise<Array<RegistryPageOf<K>['items'][number]>> {
  const items: Array<RegistryPageOf<K>['items'][number]> = [];
  let token: string | undefined;
  do {
    const page: RegistryPageOf<K> = await client.call(
      REGISTRIES[kind].list,
      { pageSize: 500, ...(token ? { pageToken: token } : {}) },
      signal ? { signal } : {},
    );
    items.push(...page.items);
    token = page.nextPageToken || undefined;
  } while (token);
  return items;
}

/** A path as the file system resolves it (symlinks followed), so that two spellings of a folder compare equal. */
export function canonical(p: string): string {
  try {
    return realpathSync(resolve(p));
  } catch {
    return resolve(p);
  }
}

const within = (dir: string, root: string): boolean =>
  dir === root || dir.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);

/**
 * The project whose resource's directory is `cwd` or contains it (the innermost one), with that
 * resource; undefined when none. Resource paths are the agent's: only meaningful in local mode.
 */
export async function projectOfDirectory(
  client: A2AClient,
  cwd: string,
  signal: AbortSignal,
): Promise<{ project: RegistryEntityOf<'project'>; resource: RegistryEntityOf<'resource'> } | undefined> {
  const here = canonical(cwd);
  // A git-remote is the server's clone, never a directory of this machine.
  const resources = (await listAll(client, 'resource', signal))
    .flatMap((r) => (r.definition.type === 'git-remote' ? [] : [{ ...r, path: r.definition.path }]))
    .filter((r) => within(here, canonical(r.path)))
    .sort((a, b) => b.path.length - a.path.length);
  if (resources.length === 0) return undefined;
  const projects = await listAll(client, 'project', signal);
  for (const resource of resources) {
    const project = projects.find((p) => p.definition.resources.includes(resource.name));
    if (project) return { project, resource };
  }
  return undefined;
}

/**
 * What a command says about the session it talks into (the `SessionChoice` of session.command.ts,
 * written out here so this module needs nothing of the commands).
 */
export interface SessionDefaultsChoice {
  session?: string;
  task?: string;
  resume?: boolean;
  actor?: string;
  project?: string;
}

/** Where a new session's project came from, for the line that says so. */
export type ProjectSource = 'flag' | 'directory' | 'config';

/**
 * The project a command works on when it names none: `flag` (`--project`), else (local mode) the
 * current directory's project, else config `defaultProject`; undefined when none of them says.
 */
export async function currentProject(
  ctx: RunContext,
  client: A2AClient,
  flag: string | undefined,
  cwd: string = process.cwd(),
): Promise<{ name: string; source: ProjectSource } | undefined> {
  if (flag !== undefined) return { name: flag, source: 'flag' };
  if (ctx.target.kind === 'local') {
    const found = await projectOfDirectory(client, cwd, ctx.signal);
    if (found) return { name: found.project.name, source: 'directory' };
  }
  const { defaultProject } = ctx.config;
  return defaultProject ? { name: defaultProject, source: 'config' } : undefined;
}

/**
 * A new session's choices with the defaults filled in: `--actor`, else config `defaultActor`; and
 * the {@link currentProject}. Nothing is filled in for a message to an existing session or task.
 */
export async function withSessionDefaults<T extends SessionDefaultsChoice>(
  ctx: RunContext,
  client: A2AClient,
  opts: T,
  cwd: string = process.cwd(),
): Promise<{ opts: T; project?: { name: string; source: ProjectSource } }> {
  if (opts.session !== undefined || opts.task !== undefined || opts.resume === true) return { opts };
  const out: T = { ...opts };
  if (out.actor === undefined && ctx.config.defaultActor) out.actor = ctx.config.defaultActor;
  const project = await currentProject(ctx, client, out.project, cwd);
  if (!project) return { opts: out };
  out.project = project.name;
  return { opts: out, project };
}

/** `project local/app (this directory)`: the line that says once which project a new session works on. */
export function projectLine(project: { name: string; source: ProjectSource }): string {
  const why = { flag: '--project', directory: 'this directory', config: 'defaultProject in config.yaml' }[
    project.source
  ];
  return `project ${project.name} (${why})`;
}

/**
 * Against a server, a new session started in a repository does not work on it (the server's projects are
 * its own paths, so the current directory names none of them): said once, so that the answer does not
 * look as if it saw the repository's files.
 */
export function noDirectoryProject(ctx: RunContext, cwd: string = process.cwd()): string | undefined {
  if (ctx.target.kind !== 'server') return undefined;
  const top = gitTopLevel(cwd);
  return top === undefined
    ? undefined
    : `no project: against a server, ${top} is not used (the server's projects are its own paths); name one with --project <name> (agents project list) or agents config set defaultProject <name>`;
}

/** The work tree's top directory when `cwd` is in a git repository, else undefined. */
export function gitTopLevel(cwd: string): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--show-toplevel'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}
