/** Why a maintenance step (migrate, backup, restore) refused or failed. */
export type MaintenanceProblem =
  /** The file or database is not one this code can use. */
  | 'invalid'
  /** Something that must exist does not. */
  | 'missing'
  /** A server uses the data and the step needs it stopped. */
  | 'busy'
  /** A tool the step runs (pg_dump, pg_restore) is not installed or failed. */
  | 'tool';

/** A maintenance step's refusal: one line saying what is wrong, and a hint. */
export class MaintenanceError extends Error {
  readonly problem: MaintenanceProblem;
  readonly hint: string;

  constructor(problem: MaintenanceProblem, message: string, hint: string) {
    super(message);
    this.problem = problem;
    this.hint = hint;
    this.name = 'MaintenanceError';
  }
}
