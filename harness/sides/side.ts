/**
 * A side is one place a case runs: ours in-process, ours over a daemon, or a reference column.
 * The engine treats every side alike through this interface.
 */
import type { Case, Outcome } from '../case-model.js';
import type { ColumnId } from '../columns.js';

export interface Side {
  readonly name: ColumnId;
  /** Runs one case and returns its normalized outcome. A rejection of `execute` is `threw`, not a throw. */
  run(item: Case): Promise<Outcome>;
  /** What the side's processes printed lately, for diagnosing a failure. */
  output?(): string;
  /** Stops everything the side started. */
  dispose(): Promise<void>;
}
