/**
 * The environment a local agent (`agents serve --stdio`) is spawned with. A module of its own: the
 * CLI's early spawn (presentation/cli/early-agent.ts) loads it before anything else.
 */

/**
 * The Node options a local agent starts with, before its script: V8's young generation at 16 MB
 * semi-spaces from the start (what it grows to anyway once the agent is busy). The start allocates
 * ~18 MB (schemas, the method table, the migrations); from V8's 1 MB start that is six scavenges
 * and a full mark-compact before the first answer. Measured on `agents serve --stdio`: ~25 ms (18%)
 * less CPU before it answers, ~8 MB more peak RSS. Without them (the plain fallback) it works the same.
 */
export const AGENT_NODE_ARGS: readonly string[] = ['--min-semi-space-size=16'];

/**
 * Whether a local agent is spawned in a process group (and session) of its own: on POSIX, yes. A
 * terminal's Ctrl-C signals its whole foreground group; an agent in it would stop at once, taking
 * the running turn with it, before its client could cancel that turn over the connection and
 * wait for it (what Ctrl-C means to `agents send` and `chat`). The agent still ends with its
 * client: when the client closes its stdin or dies, the pipe closes. (On Windows `detached` opens a
 * console of its own, and Ctrl-C reaches console processes differently.)
 */
export const AGENT_OWN_GROUP = process.platform !== 'win32';

/** glibc's malloc setting a local agent gets (see agentEnv). */
const AGENT_MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' } as const;

/**
 * The environment a local agent starts with: `env`, plus a fixed mmap threshold for glibc's malloc
 * on Linux unless `env` sets one. glibc raises that threshold each time a large mmap'd block is
 * freed; past that, large short-lived blocks come from malloc's arenas instead, and stay resident
 * after they are freed. Measured on `agents serve` after 10,000 SendMessages: 215 MB resident,
 * 143 MB with the threshold fixed at glibc's own default (128 KiB), for ~10% more CPU per request
 * (blocks are mapped and unmapped instead of reused). A local agent serves one user and lives as
 * long as their TUI or editor, so memory is the better buy. Other C libraries ignore the variable.
 */
export function agentEnv(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): NodeJS.ProcessEnv {
  if (platform !== 'linux' || env['MALLOC_MMAP_THRESHOLD_'] !== undefined) return env;
  return { ...env, ...AGENT_MALLOC_ENV };
}
