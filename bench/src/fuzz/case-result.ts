// The result of one fuzz case, as counted in the report.
import type { Failure, OperationResult } from './case-oracle.js';

export type CaseOutcome = 'accepted' | 'refused' | 'failed';

export interface CaseResult {
  index: number;
  suite: 'json' | 'database';
  /** The class of damage (`truncation`, `garbage-pages`...). */
  mutation: string;
  /** What exactly was done, for replaying and reading a failure. */
  detail: string;
  /**
   * `accepted`: the deciding operation succeeded (a checkpoint file loaded; a write into a damaged
   * database was stored); `refused`: it threw a typed CrewlineError; `failed`: any oracle broke.
   */
  outcome: CaseOutcome;
  /** The code the deciding operation was refused with. */
  code?: string;
  failures: Failure[];
  /** Wall time of the whole case. */
  wallMs: number;
  /** JSON cases: the loaded checkpoint was also resumed to the end (a sample of accepted cases). */
  resumed: boolean;
}

/** The outcome of a case from its deciding operation and its failures. */
export function outcomeOf(deciding: OperationResult, failures: readonly Failure[]): CaseOutcome {
  if (failures.length > 0) return 'failed';
  return deciding.done ? 'accepted' : 'refused';
}

/** The typed code of a refused operation, if it was refused. */
export function refusalCode(result: OperationResult): string | undefined {
  return !result.done && 'code' in result ? result.code : undefined;
}
