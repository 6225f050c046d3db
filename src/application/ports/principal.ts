/** Who is calling. Local mode has one principal, the local user; server mode authenticates one. */
export interface Principal {
  readonly id: string;
  readonly kind: 'local' | 'token';
  /** Namespaces the principal may act in. */
  readonly namespaces: readonly string[];
}

export const LOCAL_PRINCIPAL: Principal = Object.freeze({ id: 'local', kind: 'local', namespaces: ['local'] });
