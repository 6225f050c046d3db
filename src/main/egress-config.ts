/**
 * The egress allowlist of `agents serve`: every `--allow-egress HOST[:PORT]` flag, plus the
 * comma-separated CLEVERAGENTS_ALLOW_EGRESS, plus CLEVERAGENTS_PUSH_ALLOW_HOSTS — the deprecated
 * name it had when it covered webhooks only, still read so that existing setups keep delivering
 * (it now allows the host for every outbound URL, as CLEVERAGENTS_ALLOW_EGRESS does).
 */
import { EgressAllowlist, EgressAllowlistError } from '../infrastructure/index.ts';
import { envList } from './limits-config.ts';
import { StartupError } from './startup-errors.ts';

export const ALLOW_EGRESS_ENV = 'CLEVERAGENTS_ALLOW_EGRESS';
/** @deprecated since issue #35: use CLEVERAGENTS_ALLOW_EGRESS. */
export const PUSH_ALLOW_HOSTS_ENV = 'CLEVERAGENTS_PUSH_ALLOW_HOSTS';

export interface EgressSettings {
  allowlist: EgressAllowlist;
  /** The entries, as given (for the start-up log). */
  entries: string[];
  /** CLEVERAGENTS_PUSH_ALLOW_HOSTS is set (worth a warning). */
  deprecatedAlias: boolean;
}

/** Parses the flags and the environment; a malformed entry is a start-up error naming where it came from. */
export function egressSettings(flags: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): EgressSettings {
  const sources: Array<[string, string[]]> = [
    ['--allow-egress', [...flags]],
    [ALLOW_EGRESS_ENV, envList(env[ALLOW_EGRESS_ENV])],
    [PUSH_ALLOW_HOSTS_ENV, envList(env[PUSH_ALLOW_HOSTS_ENV])],
  ];
  const entries: string[] = [];
  for (const [source, values] of sources) {
    try {
      new EgressAllowlist(values);
    } catch (err) {
      if (!(err instanceof EgressAllowlistError)) throw err;
      throw new StartupError(
        `${err.message} (from ${source})`,
        'write HOST or HOST:PORT, an IPv6 address in brackets with a port, e.g. --allow-egress 127.0.0.1:11434 --allow-egress ollama.lan --allow-egress [::1]:8080',
      );
    }
    entries.push(...values);
  }
  return {
    allowlist: new EgressAllowlist(entries),
    entries,
    deprecatedAlias: envList(env[PUSH_ALLOW_HOSTS_ENV]).length > 0,
  };
}
