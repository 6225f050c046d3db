import type { Principal } from '../ports/principal.ts';
import type { DiagnosticCheck, SystemProbe } from '../ports/system.port.ts';

/** Checks that depend on who asks (e.g. the actors they can see). */
export type PrincipalChecks = (principal: Principal) => Promise<DiagnosticCheck[]>;

export interface HealthReport {
  status: 'ok' | 'degraded';
  version: string;
  uptimeSeconds: number;
  storage: 'ok' | 'unavailable';
  liveTasks: number;
}

export interface DiagnosticsReport {
  status: 'ok' | 'warn' | 'fail';
  checks: DiagnosticCheck[];
  summary: { ok: number; warn: number; fail: number };
}

/** Liveness (`health/check`) and a full self-examination (`diagnostics/run`). */
export class HealthService {
  private readonly started = Date.now();

  private readonly probe: SystemProbe;
  private readonly version: string;
  private readonly liveTasks: () => number;
  private readonly more?: PrincipalChecks | undefined;

  constructor(probe: SystemProbe, version: string, liveTasks: () => number, more?: PrincipalChecks) {
    this.probe = probe;
    this.version = version;
    this.liveTasks = liveTasks;
    this.more = more;
  }

  async check(): Promise<HealthReport> {
    let storage: HealthReport['storage'] = 'ok';
    try {
      await this.probe.ping();
    } catch {
      storage = 'unavailable';
    }
    return {
      status: storage === 'ok' ? 'ok' : 'degraded',
      version: this.version,
      uptimeSeconds: Math.round((Date.now() - this.started) / 1000),
      storage,
      liveTasks: this.liveTasks(),
    };
  }

  async diagnose(principal?: Principal): Promise<DiagnosticsReport> {
    const checks = await this.probe.checks();
    if (this.more && principal) checks.push(...(await this.more(principal)));
    const summary = { ok: 0, warn: 0, fail: 0 };
    for (const c of checks) summary[c.status]++;
    const status = summary.fail > 0 ? 'fail' : summary.warn > 0 ? 'warn' : 'ok';
    return { status, checks, summary };
  }
}
