/**
 * What a definition must pass before the registry stores it (add, update, sync push): its schema
 * with located errors, write access to its namespace, references it may make, the capabilities its
 * namespace must hold (issue #35), and what the file system says of a resource's directory.
 */
import { isAbsolute, resolve } from 'node:path';
import { AppError, type FieldViolation } from '../../domain/errors.ts';
import {
  DEFINITION_SCHEMAS,
  referencesOf,
  type Definition,
  type Reference,
  type RegistryKind,
} from '../../domain/registry/entities.ts';
import { namespaceOf } from '../../domain/registry/names.ts';
import type { Principal } from '../ports/principal.ts';
import type { RegistryLookup, ResourceInspector } from '../ports/registry.repository.port.ts';
import {
  type CapabilityProblem,
  type CapabilityService,
  capabilityViolations,
  grantHint,
} from './capability.service.ts';
import { definitionError } from './definition.errors.ts';
import type { NamespaceAccess } from './namespace-access.service.ts';

/** A definition as given: an object, or the text of a YAML/JSON file (for located errors). */
export interface DefinitionInput {
  definition?: Record<string, unknown> | undefined;
  source?: { text: string; filename?: string | undefined; baseDir?: string | undefined } | undefined;
}

export interface DefinitionCheckDeps {
  namespaces: NamespaceAccess;
  capabilities: CapabilityService;
  inspector: ResourceInspector;
  builtinModels: readonly string[];
  lookup: RegistryLookup;
}

export class DefinitionChecks {
  private readonly deps: DefinitionCheckDeps;

  constructor(deps: DefinitionCheckDeps) {
    this.deps = deps;
  }

  /** Parses, validates (schema, write access, references, the file system) and reports every problem at once. */
  async prepare(
    kind: RegistryKind,
    input: DefinitionInput,
    principal: Principal,
    expectedName?: string,
  ): Promise<{ definition: Definition; refs: Reference[] }> {
    const parsed = await this.read(kind, input);
    const at = locator(parsed);
    const result = DEFINITION_SCHEMAS[kind].safeParse(parsed.value);
    const problems: FieldViolation[] = result.success ? [] : schemaProblems(kind, result.error.issues, at);
    // References are checked even when other fields are wrong, so one run reports everything.
    const definition = (result.success ? result.data : parsed.value) as Definition;
    const name = typeof definition.name === 'string' ? definition.name : '';
    if (result.success) {
      if (expectedName !== undefined && name !== expectedName) {
        problems.push(
          at(['name'], `is ${name}, but this updates ${expectedName} (entities cannot be renamed: remove and add)`),
        );
      }
      await this.deps.namespaces.assertWritable(namespaceOf(name), principal);
    }
    const refs = safeReferences(kind, definition);
    problems.push(...(await this.referenceProblems(kind, name, refs, principal, at)));
    if (!result.success) throw definitionError(parsed.filename, sortByLine(problems));
    const declared = await this.deps.capabilities.declarationProblems(kind, definition, namespaceOf(name), principal);
    if (declared.problems.length > 0)
      throw capabilityRefusal(declared.problems, namespaceOf(name), parsed.filename, at);
    if (declared.pathProblem !== undefined) problems.push(at(['path'], declared.pathProblem));
    const stored =
      kind === 'resource' && declared.resourcePath
        ? ({ ...definition, path: declared.resourcePath.stored } as Definition)
        : definition;
    problems.push(...(await this.checkKind(kind, stored, at, declared.resourcePath?.real)));
    if (problems.length > 0)
      throw definitionError(
        parsed.filename,
        sortByLine(problems),
        declared.pathProblem !== undefined ? this.deps.capabilities.pathHint(namespaceOf(name)) : undefined,
      );
    return { definition: stored, refs };
  }

  /** The definition as given (its text parsed, with lines for errors), a resource's relative path resolved where it may be. */
  private async read(kind: RegistryKind, input: DefinitionInput): Promise<Parsed> {
    // The YAML parser loads with the first definition given as text, not with every agent.
    const parsed = input.source
      ? (await import('./definition-source.ts')).parseDefinitionSource(
          input.source.text,
          input.source.filename ?? `<${kind} definition>`,
        )
      : { value: input.definition ?? {}, lineOf: () => undefined, filename: `<${kind} definition>` };
    const raw = structuredClone(parsed.value) as Record<string, unknown>;
    const baseDir = input.source?.baseDir;
    // A client's directory means nothing to a server: there, relative paths are the workspace's —
    // unless the namespace may name any host path (the administrator's local/, on the server's machine).
    if (
      kind === 'resource' &&
      (await this.deps.capabilities.anyHostPath(typeof raw['name'] === 'string' ? raw['name'] : '')) &&
      typeof raw['path'] === 'string' &&
      !isAbsolute(raw['path']) &&
      baseDir &&
      isAbsolute(baseDir)
    ) {
      raw['path'] = resolve(baseDir, raw['path']);
    }
    return { ...parsed, value: raw };
  }

  /** Each reference must name something the principal can read (a resource: write), and not the definition itself. */
  private async referenceProblems(
    kind: RegistryKind,
    name: string,
    refs: readonly Reference[],
    principal: Principal,
    at: Locate,
  ): Promise<FieldViolation[]> {
    const problems: FieldViolation[] = [];
    const readable = await this.deps.namespaces.readable(principal);
    for (const ref of refs) {
      if (ref.kind === kind && ref.name === name) {
        problems.push(at(ref.path, `refers to itself`));
        continue;
      }
      const target = await this.deps.lookup(ref.kind, ref.name);
      if (!target || !readable.includes(target.namespace))
        problems.push(at(ref.path, `no ${ref.kind} named ${ref.name} (see \`agents ${ref.kind} list\`)`));
      else if (ref.kind === 'resource' && !(await this.deps.namespaces.mayWrite(target.namespace, principal)))
        problems.push(at(ref.path, resourceWriteRefusal(ref.name, target.namespace)));
    }
    return problems;
  }

  /** `real`: a resource's directory as the capability check resolved it (it exists and is allowed). */
  private async checkKind(kind: RegistryKind, d: Definition, at: Locate, real?: string): Promise<FieldViolation[]> {
    const out: FieldViolation[] = [];
    if (kind === 'resource' && 'path' in d && 'type' in d && real !== undefined) {
      const branch = d.type === 'git-checkout' ? d.branch : undefined;
      const facts = await this.deps.inspector.inspect(real, branch);
      if (!facts.exists || !facts.isDirectory) out.push(at(['path'], `${d.path} is not a directory`));
      else if (d.type === 'git-checkout' && !facts.gitWorkTree)
        out.push(at(['path'], `${d.path} is not a git work tree (run \`git init\` there, or use type fs-directory)`));
      else if (branch && facts.branchExists === false)
        out.push(at(['branch'], `branch ${branch} does not exist in ${d.path}`));
    }
    if (kind === 'actor' && 'provider' in d && d.provider === 'builtin' && !this.deps.builtinModels.includes(d.model)) {
      out.push(at(['model'], `a builtin actor runs one of: ${this.deps.builtinModels.join(', ')}`));
    }
    return out;
  }
}

/** A definition's value with where its fields are written (line numbers when it was given as text). */
interface Parsed {
  value: Record<string, unknown>;
  lineOf: (path: ReadonlyArray<PropertyKey>) => number | undefined;
  filename: string;
}

/** A problem at a field path, located in the definition's file. */
type Locate = (path: ReadonlyArray<PropertyKey>, description: string) => FieldViolation;

function locator(parsed: Parsed): Locate {
  return (path, description) => {
    const v: FieldViolation = { field: fieldPath(path), description, file: parsed.filename };
    const line = parsed.lineOf(path);
    if (line !== undefined) v.line = line;
    return v;
  };
}

/** An issue the definition schemas report (application code names zod's types through the domain's schemas). */
type SchemaIssue = Extract<
  ReturnType<(typeof DEFINITION_SCHEMAS)[RegistryKind]['safeParse']>,
  { success: false }
>['error']['issues'][number];

function schemaProblems(kind: RegistryKind, issues: readonly SchemaIssue[], at: Locate): FieldViolation[] {
  return issues.flatMap((i) =>
    // An unknown key is reported where it is written, one problem per key.
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) =>
          at([...i.path, k], `is not a field of ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} definition`),
        )
      : [at(i.path, i.message)],
  );
}

/** The fields that need a capability the namespace does not hold, all in one refusal. */
function capabilityRefusal(problems: CapabilityProblem[], namespace: string, filename: string, at: Locate): AppError {
  const violations = sortByLine(capabilityViolations(problems, at));
  const n = violations.length;
  const lines = violations.map(
    (v) => `  ${v.file ?? filename}${v.line ? `:${v.line}` : ''}: ${v.field}: ${v.description}`,
  );
  return new AppError(
    'FORBIDDEN',
    `${filename}: ${n} field${n === 1 ? ' needs a capability' : 's need capabilities'} namespace ${namespace} does not hold:\n${lines.join('\n')}`,
    {
      fields: violations,
      details: { namespace, capabilities: [...new Set(problems.map((p) => p.capability))] },
      hint: grantHint(namespace, problems[0]?.capability ?? 'runs-program'),
    },
  );
}

/** References of a definition that may not have passed validation: only well-formed names count. */
function safeReferences(kind: RegistryKind, d: Definition): Reference[] {
  try {
    return referencesOf(kind, d).filter(
      (r) => typeof r.name === 'string' && /^[a-z][a-z0-9_-]*\/[a-z][a-z0-9_-]*$/.test(r.name),
    );
  } catch {
    return [];
  }
}

const sortByLine = (p: FieldViolation[]): FieldViolation[] =>
  [...p].sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));

function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  return (
    path.reduce<string>(
      (acc, k) => (typeof k === 'number' ? `${acc}[${k}]` : acc ? `${acc}.${String(k)}` : String(k)),
      '',
    ) || '(definition)'
  );
}

/** A project may name another namespace's resource only where its plans could write: member or above. */
export function resourceWriteRefusal(resource: string, namespace: string): string {
  return `you may read resource ${resource} but not write it: the project's plans and chats change its files, which needs the role member (or above) in namespace ${namespace}`;
}
