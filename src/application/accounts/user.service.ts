import { AppError } from '../../domain/errors.ts';
import type { Role } from '../../domain/permissions.ts';
import type { AccountRepository, KeyHasher, UserRecord } from '../ports/account.repository.port.ts';
import type { Principal } from '../ports/principal.ts';
import { issueKey, type NewKey } from './api-key.service.ts';
import type { AuditRecorder } from './audit.service.ts';
import { RESERVED_USER_NAMES, SEGMENT, serverTokenId } from './credential-formats.ts';
import { requireServerAdmin } from './server-admin.rules.ts';

export interface UserView {
  name: string;
  displayName?: string | undefined;
  admin: boolean;
  defaultNamespace: string;
  createdAt: string;
  disabledAt?: string | undefined;
  externalId?: string | undefined;
}

export interface WhoAmI {
  user: string;
  displayName?: string | undefined;
  admin: boolean;
  kind: Principal['kind'];
  credential?: string | undefined;
  defaultNamespace: string;
  namespace: string;
  namespaces: Array<{ name: string; role: Role }>;
}

export interface UserServiceDeps {
  accounts: Pick<
    AccountRepository,
    'getUser' | 'countUsers' | 'listUsers' | 'createUser' | 'setDisabled' | 'createKey' | 'getKey' | 'replaceKey'
  >;
  /** Hashes the secrets of a new user's first key and of the server token. */
  hasher: Pick<KeyHasher, 'hash'>;
  audit: AuditRecorder;
  now?: () => number;
}

/** The bootstrap administrator, made on a server's first start. */
export const BOOTSTRAP_ADMIN = 'admin';
export const SERVER_TOKEN_KEY_NAME = 'server-token';

/**
 * Server-mode users (`facade.users`): who the caller is, the users administrators add, disable
 * and enable (each new user with a first key), and the bootstrap administrator with the server token.
 */
export class UserService {
  private readonly deps: UserServiceDeps;
  private readonly now: () => number;

  constructor(deps: UserServiceDeps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
  }

  /** Who the caller is, where the request acts, and their namespaces. */
  async whoami(principal: Principal): Promise<WhoAmI> {
    const user =
      principal.kind === 'key' || principal.kind === 'jwt' ? await this.deps.accounts.getUser(principal.id) : undefined;
    return {
      user: principal.id,
      ...(user?.displayName !== undefined ? { displayName: user.displayName } : {}),
      admin: principal.admin,
      kind: principal.kind,
      ...(principal.credential !== undefined ? { credential: principal.credential } : {}),
      defaultNamespace: principal.defaultNamespace,
      namespace: principal.namespace,
      namespaces: Object.entries(principal.roles)
        .map(([name, role]) => ({ name, role }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    };
  }

  /** A user (an administrator's act), with their personal namespace and a first key `default`. */
  async add(
    input: { name: string; displayName?: string | undefined; admin?: boolean | undefined },
    by: Principal,
  ): Promise<{ user: UserView; key: NewKey }> {
    requireServerAdmin(by, 'add users');
    checkUserName(input.name);
    const user: UserRecord = {
      name: input.name,
      admin: input.admin === true,
      defaultNamespace: input.name,
      createdAt: this.iso(),
      ...(input.displayName !== undefined ? { displayName: input.displayName } : {}),
    };
    await this.deps.accounts.createUser(user);
    await this.deps.audit.record({
      event: 'user.created',
      by,
      target: user.name,
      namespace: user.name,
      outcome: 'ok',
      details: { admin: user.admin },
    });
    const key = await issueKey({ ...this.deps, now: this.now }, user.name, 'default', undefined, by);
    return { user: userView(user), key };
  }

  async list(by: Principal): Promise<{ users: UserView[] }> {
    requireServerAdmin(by, 'list users');
    return { users: (await this.deps.accounts.listUsers()).map(userView) };
  }

  disable(name: string, by: Principal): Promise<UserView> {
    return this.setDisabled(name, true, by);
  }

  enable(name: string, by: Principal): Promise<UserView> {
    return this.setDisabled(name, false, by);
  }

  /**
   * On every start: the first start makes the administrator `admin` (an owner of `local/`); then
   * the server token becomes admin's key `server-token` (the previous one is replaced).
   */
  async ensureServerToken(token: string): Promise<{ user: string; created: boolean }> {
    let created = false;
    let admin = await this.deps.accounts.getUser(BOOTSTRAP_ADMIN);
    if (!admin && (await this.deps.accounts.countUsers()) === 0) {
      admin = { name: BOOTSTRAP_ADMIN, admin: true, defaultNamespace: 'local', createdAt: this.iso() };
      await this.deps.accounts.createUser(admin, { joinExisting: true });
      created = true;
      await this.deps.audit.record({
        event: 'user.created',
        principal: BOOTSTRAP_ADMIN,
        target: BOOTSTRAP_ADMIN,
        outcome: 'ok',
        details: { admin: true, via: 'first start' },
      });
    }
    admin ??= (await this.deps.accounts.listUsers()).find((u) => u.admin && u.disabledAt === undefined);
    if (!admin) throw new Error('no administrator to hold the server token (every administrator is disabled)');
    const id = serverTokenId(token);
    const existing = await this.deps.accounts.getKey(id);
    if (!existing || existing.user !== admin.name || existing.revokedAt !== undefined)
      await this.deps.accounts.replaceKey({
        id,
        user: admin.name,
        name: SERVER_TOKEN_KEY_NAME,
        hash: await this.deps.hasher.hash(token),
        createdAt: this.iso(),
      });
    return { user: admin.name, created };
  }

  private async setDisabled(name: string, disable: boolean, by: Principal): Promise<UserView> {
    requireServerAdmin(by, disable ? 'disable users' : 'enable users');
    if (name === by.id)
      throw new AppError('INVALID_STATE', `You cannot ${disable ? 'disable' : 'enable'} yourself`, {
        hint: 'ask another administrator',
      });
    const user = await this.deps.accounts.getUser(name);
    if (!user)
      throw new AppError('NOT_FOUND', `User ${name} was not found`, {
        details: { entity: 'user', name },
        hint: 'see the users with `agents user list`',
      });
    const at = disable ? (user.disabledAt ?? this.iso()) : undefined;
    if ((user.disabledAt !== undefined) !== disable) {
      await this.deps.accounts.setDisabled(name, at);
      await this.deps.audit.record({
        event: disable ? 'user.disabled' : 'user.enabled',
        by,
        target: name,
        outcome: 'ok',
      });
    }
    const { disabledAt: _, ...rest } = user;
    return userView(at !== undefined ? { ...rest, disabledAt: at } : rest);
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }
}

/** User names follow the namespace-name rules (the user's namespace is named after them). */
function checkUserName(name: string): void {
  if (!SEGMENT.test(name))
    throw new AppError('INVALID_PARAMS', `The user name ${JSON.stringify(name.slice(0, 80))} is not valid`, {
      fields: [
        { field: 'name', description: 'lowercase letters, digits, - and _, starting with a letter (at most 63)' },
      ],
    });
  if (RESERVED_USER_NAMES.includes(name))
    throw new AppError('INVALID_PARAMS', `The user name ${name} is reserved`, {
      fields: [{ field: 'name', description: `not one of ${RESERVED_USER_NAMES.join(', ')}` }],
      hint: 'pick another name',
    });
}

function userView(u: UserRecord): UserView {
  return {
    name: u.name,
    admin: u.admin,
    defaultNamespace: u.defaultNamespace,
    createdAt: u.createdAt,
    ...(u.displayName !== undefined ? { displayName: u.displayName } : {}),
    ...(u.disabledAt !== undefined ? { disabledAt: u.disabledAt } : {}),
    ...(u.externalId !== undefined ? { externalId: u.externalId } : {}),
  };
}
