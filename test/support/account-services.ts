/**
 * The three server-mode account services built over one account store, as the composition root
 * builds them: sign-in (with OIDC JWTs when a verifier is given), users, and API keys.
 */
import {
  ApiKeyService,
  AuthenticationService,
  JwtSignIn,
  UserService,
  type AccountRepository,
  type AuditRecorder,
  type JwtVerifier,
  type KeyHasher,
  type Logger,
  type NamespaceRepository,
} from '../../src/application/index.ts';

export interface AccountServicesInput {
  accounts: AccountRepository;
  hasher: KeyHasher;
  namespaces: Pick<NamespaceRepository, 'get' | 'defaultFor'>;
  audit: AuditRecorder;
  logger: Logger;
  jwt?: JwtVerifier | undefined;
  now?: (() => number) | undefined;
}

export interface AccountServices {
  authentication: AuthenticationService;
  users: UserService;
  keys: ApiKeyService;
}

export function accountServices(input: AccountServicesInput): AccountServices {
  const { accounts, hasher, namespaces, audit, logger, jwt } = input;
  const now = input.now ?? Date.now;
  const authentication = new AuthenticationService({
    accounts,
    hasher,
    audit,
    logger,
    now,
    jwt: jwt && new JwtSignIn({ jwt, accounts, namespaces, audit, logger, now }),
  });
  return {
    authentication,
    users: new UserService({ accounts, hasher, audit, now }),
    keys: new ApiKeyService({ accounts, hasher, audit, now, verified: authentication }),
  };
}
