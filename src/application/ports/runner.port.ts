/**
 * The agent processes that run work: each holds a lease (a row renewed while it lives). Tasks
 * record the runner that runs their turn, so a process starting up — or any live one, from time
 * to time — can settle what a stopped process left running, and only that: in local mode several
 * agent processes share one database, and a task may legitimately be run by another live one.
 */
export interface RunnerRegistry {
  /** This process's runner id. */
  readonly self: string;
  /** True while the runner's process is up and its lease fresh; false for null (no runner recorded). */
  isLive(runnerId: string | null | undefined): Promise<boolean>;
}
