import { appendFileSync } from 'node:fs';
import { A2AClient, type ClientTransport } from '../../protocol/client/index.ts';

/** Set to a file path, every call a command makes is appended to it as `command<TAB>method` (the tests read it). */
export const CALL_TRACE_ENV = 'CLEVERAGENTS_CLI_TRACE';

/** A command called a method it does not declare in COMMAND_METHODS: a defect of the CLI, not of the user. */
export class UndeclaredCallError extends Error {
  constructor(command: string, method: string) {
    super(
      `the command "${command}" called ${method}, which it does not declare (src/presentation/cli/command-methods.ts)`,
    );
    this.name = 'UndeclaredCallError';
  }
}

/**
 * The client a command gets: it may call only the methods the command declares, so the table the
 * CLI's tests check (and users read in the README) is what the commands really call.
 */
export function declaredClient(
  command: string,
  declared: readonly string[],
  client: A2AClient,
  env: NodeJS.ProcessEnv,
): A2AClient {
  const allowed = new Set(declared);
  const trace = env[CALL_TRACE_ENV];
  // A line without a method: the command ran (and connected), whether or not it calls anything.
  if (trace) appendFileSync(trace, `${command}\t\n`);
  const check = (method: string): void => {
    if (!allowed.has(method)) throw new UndeclaredCallError(command, method);
    if (trace) appendFileSync(trace, `${command}\t${method}\n`);
  };
  const t = client.transport;
  const transport: ClientTransport = {
    kind: t.kind,
    request: (method, params, opts) => {
      check(method);
      return t.request(method, params, opts);
    },
    stream: (method, params, opts) => {
      check(method);
      return t.stream(method, params, opts);
    },
    agentCard: () => t.agentCard(),
    close: () => t.close(),
  };
  const out = new A2AClient(transport);
  out.tenant = client.tenant;
  return out;
}
