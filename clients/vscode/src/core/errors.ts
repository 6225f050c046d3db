import { A2AClientError, A2ATransportError } from '../../../../src/protocol/client/index.ts';

/** What the extension shows for a failure: one sentence, and what to do about it when known. */
export interface ErrorView {
  message: string;
  hint?: string;
}

/**
 * Any failure as the user should see it: the agent's message and hint for a refused call, the
 * connection's own words (with the agent's last log lines) for a dead or unreachable agent, and
 * never a stack trace.
 */
export function errorView(err: unknown): ErrorView {
  if (err instanceof A2AClientError) {
    const fields = err.fieldViolations.map((f) => `${f.field}: ${f.description}`);
    const message = fields.length > 0 ? `${err.message} (${fields.join('; ')})` : err.message;
    return err.hint ? { message, hint: err.hint } : { message };
  }
  if (err instanceof A2ATransportError) return { message: err.message, hint: transportHint(err.message) };
  if (err instanceof ExtensionError)
    return err.hint ? { message: err.message, hint: err.hint } : { message: err.message };
  if (err instanceof Error) return { message: err.message };
  return { message: String(err) };
}

/** A failure of the extension's own making (bad settings, nothing to act on), with its hint. */
export class ExtensionError extends Error {
  readonly hint?: string | undefined;

  constructor(message: string, hint?: string) {
    super(message);
    this.hint = hint;
    this.name = 'ExtensionError';
  }
}

function transportHint(message: string): string {
  if (/could not start the agent process/.test(message))
    return 'set cleveragents.agentPath to the agents program (for example the full path of node_modules/.bin/agents)';
  if (/exited/.test(message))
    return 'the agent is started again on the next request; its log is in the CleverAgents output';
  return 'check cleveragents.serverUrl and that the server is running (agents serve --port …)';
}
