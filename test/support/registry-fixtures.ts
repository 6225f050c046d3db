import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { initRepo } from './git.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/registry/', import.meta.url));

/** The valid fixture files of test/fixtures/registry in the order their references need, with each kind and name. */
export const REGISTRY_FIXTURES = [
  { file: 'prettier.tool.yaml', kind: 'tool', name: 'local/prettier' },
  { file: 'shell.skill.yaml', kind: 'skill', name: 'local/shell' },
  { file: 'reviewer.actor.yaml', kind: 'actor', name: 'local/reviewer' },
  { file: 'api.resource.yaml', kind: 'resource', name: 'local/api' },
  { file: 'api.project.yaml', kind: 'project', name: 'local/api' },
  { file: 'rename.action.yaml', kind: 'action', name: 'local/rename-symbol' },
] as const;

/** Copies every fixture file into `defs`, next to the git repository `api` (on main) that the resource's `path: ./api` names. */
export function copyRegistryFixtures(defs: string): void {
  initRepo(join(defs, 'api'), {});
  for (const f of readdirSync(FIXTURES)) copyFileSync(join(FIXTURES, f), join(defs, f));
}

/** An action of two deterministic steps (each a checkpoint), named `name`: rollback and corrections work on them. */
export const twoWritesAction = (name: string): string => `name: ${name}
description: Write two files, one step each
descriptionTemplate: Write first.txt and second.txt
definitionOfDone: both files exist
steps:
  - id: first
    tool: builtin/write-file
    args: { path: first.txt, content: "one" }
  - id: second
    tool: builtin/write-file
    args: { path: second.txt, content: "two" }
`;
