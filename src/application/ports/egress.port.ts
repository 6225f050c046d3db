/**
 * The declare-time check of an outbound URL (an actor's `baseUrl`, an MCP server's `url`, a hook's
 * or a push config's webhook): whether the server may connect there on a member's behalf.
 * Implemented by the infrastructure's egress guard, which also checks again when it connects.
 */
export interface EgressPolicy {
  /**
   * Undefined when the URL may be used; otherwise one sentence saying why not, naming the host,
   * the address it is or resolves to, and what an administrator can do (e.g. "egress to
   * ollama.lan is refused: it resolves to 10.0.0.5, a private address; a server administrator may
   * allow it with `agents serve --allow-egress ollama.lan:11434`"). A name that does not resolve
   * now is not refused (it is checked again when it is used).
   */
  refusal(url: string, schemes?: Readonly<Record<string, number>>): Promise<string | undefined>;
}
