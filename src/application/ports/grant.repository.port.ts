import type { Capability } from '../../domain/registry/capabilities.ts';

/** A capability a server administrator granted a namespace. */
export interface CapabilityGrant {
  namespace: string;
  capability: Capability;
  /** host-path only: the host directories the namespace's definitions may name (absent: any). */
  paths?: string[] | undefined;
  grantedBy: string;
  grantedAt: string;
}

/** Where grants are kept (they go with their namespace when it is deleted). */
export interface GrantRepository {
  /** The namespace's grants, by capability. */
  list(namespace: string): Promise<CapabilityGrant[]>;
  /** Grants, or replaces the grant of that capability (false: the namespace does not exist). */
  put(grant: CapabilityGrant): Promise<boolean>;
  /** Takes a grant back (false: there was none). */
  remove(namespace: string, capability: Capability): Promise<boolean>;
}
