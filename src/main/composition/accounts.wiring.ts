import { ApiKeyService } from '../../application/accounts/api-key.service.ts';
import type { AuditService } from '../../application/accounts/audit.service.ts';
import { AuthenticationService } from '../../application/accounts/authentication.service.ts';
import { JwtSignIn } from '../../application/accounts/jwt-sign-in.service.ts';
import { UserService } from '../../application/accounts/user.service.ts';
import type { ServiceDeps } from './service-deps.ts';

/** Server mode's users, API keys and sign-in (credentials into principals). */
export interface AccountParts {
  authentication: AuthenticationService;
  users: UserService;
  keys: ApiKeyService;
}

export function buildAccounts(deps: ServiceDeps, audit: AuditService): AccountParts {
  const { repo: accounts, hasher } = deps.accounts;
  const { logger } = deps;
  const authentication = new AuthenticationService({
    accounts,
    hasher,
    audit,
    logger,
    jwt: deps.jwt && new JwtSignIn({ jwt: deps.jwt, accounts, namespaces: deps.namespaces, audit, logger }),
  });
  return {
    authentication,
    users: new UserService({ accounts, hasher, audit }),
    keys: new ApiKeyService({ accounts, hasher, audit, verified: authentication }),
  };
}
