import type { Harness, TransportName } from '../support/harness.ts';

/** What a contract suite gets from the runner: the transport's harness and a recorder for parity. */
export interface SuiteContext {
  transport: TransportName;
  harness(): Harness;
  record: (name: string, value: unknown) => void;
}
