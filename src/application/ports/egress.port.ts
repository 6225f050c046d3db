/** The egress guard as the application sees it: whether a URL may be reached from this server. */
export interface EgressPolicy {
  /**
   * Why the URL may not be reached from here (undefined: it may): not http(s), or its host is (or
   * resolves to) a loopback, private or link-local address that no administrator allowlisted.
   */
  refusal(url: string): Promise<string | undefined>;
}
