import { AppError } from '../../domain/errors.ts';
import { roleGrants, type NamespacePermission } from '../../domain/permissions.ts';
import { BUILTIN_NAMESPACE } from '../../domain/registry/names.ts';
import {
  MAX_SECRET_BYTES,
  MAX_SECRETS_PER_NAMESPACE,
  normaliseSecretValue,
  secretBinding,
} from '../../domain/secrets.ts';
import type { AuditEntry } from '../accounts/audit.service.ts';
import { roleIn, type Principal } from '../ports/principal.ts';
import {
  SecretUnreadable,
  type SecretCipher,
  type SecretStore,
  type SecretSummary,
} from '../ports/secret-store.port.ts';
import { namespaceNotFound } from '../registry/namespace.service.ts';

export interface SecretServiceDeps {
  store: SecretStore;
  cipher: SecretCipher;
  /** Where `secret.set` and `secret.removed` are recorded (name and namespace; never the value). */
  audit: { record(entry: AuditEntry): Promise<void> };
  now?: () => Date;
}

export interface SecretSetResult {
  namespace: string;
  name: string;
  /** False when the secret was there and got a new value. */
  created: boolean;
  updatedAt: string;
}

export interface SecretList {
  namespace: string;
  secrets: SecretSummary[];
}

/**
 * A namespace's secrets: set (sealed with the server's key), listed by name, removed — never
 * returned. Members write them, viewers see their names; a namespace the caller is not in looks
 * exactly like one that does not exist. The platform reads a value only for an actor of the same
 * namespace ({@link reveal}).
 */
export class SecretService {
  private readonly now: () => Date;

  private readonly deps: SecretServiceDeps;

  constructor(deps: SecretServiceDeps) {
    this.deps = deps;
    this.now = deps.now ?? (() => new Date());
  }

  /** Stores a value (one trailing newline removed) under a name, new or replacing the one there. */
  async set(
    input: { namespace?: string | undefined; name: string; value: string },
    principal: Principal,
  ): Promise<SecretSetResult> {
    const namespace = this.where(input.namespace, principal, 'registry:write');
    const { value, problem } = normaliseSecretValue(input.value);
    if (problem)
      throw new AppError(
        'INVALID_PARAMS',
        problem === 'empty'
          ? 'Invalid parameters: value: is empty'
          : `Invalid parameters: value: is larger than ${MAX_SECRET_BYTES / 1024} KiB`,
        {
          fields: [
            {
              field: 'value',
              description: problem === 'empty' ? 'is empty' : `is larger than ${MAX_SECRET_BYTES} bytes`,
            },
          ],
          hint: 'pipe the value on stdin: printf %s "$KEY" | agents secret set NAME',
        },
      );
    const existing = await this.deps.store.get(namespace, input.name);
    if (!existing && (await this.deps.store.count(namespace)) >= MAX_SECRETS_PER_NAMESPACE)
      throw new AppError('INVALID_STATE', `Namespace ${namespace} holds ${MAX_SECRETS_PER_NAMESPACE} secrets already`, {
        details: { namespace, limit: MAX_SECRETS_PER_NAMESPACE },
        hint: `remove some first (agents secret list --namespace ${namespace})`,
      });
    const at = this.now().toISOString();
    const ciphertext = await this.deps.cipher.seal(value, secretBinding(namespace, input.name));
    const write = await this.deps.store.put({
      namespace,
      name: input.name,
      ciphertext,
      createdBy: principal.id,
      createdAt: at,
      updatedAt: at,
    });
    await this.deps.audit.record({
      event: 'secret.set',
      by: principal,
      namespace,
      target: input.name,
      outcome: 'ok',
      details: { created: write.created },
    });
    return { namespace, name: input.name, created: write.created, updatedAt: at };
  }

  /** The namespace's secrets by name, with who made them and when (no value). */
  async list(namespace: string | undefined, principal: Principal): Promise<SecretList> {
    if (namespace === BUILTIN_NAMESPACE) return { namespace, secrets: [] };
    const ns = this.where(namespace, principal, 'registry:read');
    return { namespace: ns, secrets: await this.deps.store.list(ns) };
  }

  async remove(
    input: { namespace?: string | undefined; name: string },
    principal: Principal,
  ): Promise<{ namespace: string; name: string; removed: true }> {
    const namespace = this.where(input.namespace, principal, 'registry:write');
    if (!(await this.deps.store.remove(namespace, input.name))) throw secretNotFound(namespace, input.name);
    await this.deps.audit.record({
      event: 'secret.removed',
      by: principal,
      namespace,
      target: input.name,
      outcome: 'ok',
    });
    return { namespace, name: input.name, removed: true };
  }

  /**
   * A secret's value, for the platform's own use of it (an actor's API key, from the actor's own
   * namespace): undefined when there is none. A value that does not open is an error that names
   * the secret and how to set it again.
   */
  async reveal(namespace: string, name: string): Promise<string | undefined> {
    const stored = await this.deps.store.get(namespace, name);
    if (!stored) return undefined;
    try {
      return await this.deps.cipher.open(stored.ciphertext, secretBinding(namespace, name));
    } catch (err) {
      if (!(err instanceof SecretUnreadable)) throw err;
      // The fix is in the message too: it reaches users as an actor's "no API key" problem.
      throw new AppError(
        'INVALID_STATE',
        `The secret ${name} of namespace ${namespace} ${err.message}; ${setAgain(namespace, name)}`,
        { details: { namespace, name }, hint: setAgain(namespace, name) },
      );
    }
  }

  /** The namespace a call acts in (the one named, else the request's), where the caller's role allows it. */
  private where(named: string | undefined, principal: Principal, permission: NamespacePermission): string {
    const namespace = named ?? principal.namespace;
    if (namespace === BUILTIN_NAMESPACE)
      throw new AppError('FORBIDDEN', 'builtin/ has no secrets: it ships with CleverAgents and cannot be changed', {
        details: { namespace },
        hint: 'use your own namespace (agents secret set NAME --namespace <yours>)',
      });
    const role = roleIn(principal, namespace);
    if (!role) throw namespaceNotFound(namespace);
    if (!roleGrants(role, permission))
      throw new AppError('FORBIDDEN', `You may not change the secrets of ${namespace}: your role there is ${role}`, {
        details: { namespace, role, permission },
        hint: 'ask an owner or admin of the namespace for the member role',
      });
    return namespace;
  }
}

/** How to give a secret a value again. */
export function setAgain(namespace: string, name: string): string {
  return `set it again: agents secret set ${name} --namespace ${namespace}`;
}

function secretNotFound(namespace: string, name: string): AppError {
  return new AppError('NOT_FOUND', `There is no secret ${name} in namespace ${namespace}`, {
    details: { entity: 'secret', namespace, name },
    hint: `see its secrets with \`agents secret list --namespace ${namespace}\``,
  });
}
