export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface DiagnosticCheck {
  name: string;
  category: 'storage' | 'disk' | 'versions' | 'configuration' | 'actors';
  status: CheckStatus;
  detail: string;
  hint?: string | undefined;
}

/** What the running system can tell about itself (storage, disk, versions, configuration). */
export interface SystemProbe {
  /** A quick liveness probe of storage; throws when storage is unusable. */
  ping(): Promise<void>;
  checks(): Promise<DiagnosticCheck[]>;
}
