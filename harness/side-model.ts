/**
 * A place a case runs (ours in process, ours over a daemon, a reference column), as the engine
 * and each side's module see it. A module of its own, so a side that starts elsewhere (the
 * `ours-worker` column in reference/flow-sides.ts) names it without importing sides.ts, which loads it.
 */
import type { Case, Outcome } from './case-model.js';
import type { ColumnId } from './columns.js';
import type { Flow } from './flow-model.js';
import type { FlowSession } from './flows.js';

export interface Side {
  readonly name: ColumnId;
  /** Runs one case and returns its normalized outcome. A rejection of `execute` is `threw`, not a throw. */
  run(item: Case): Promise<Outcome>;
  /** A runtime host for one flow, its state empty; absent on a side that hosts no runtime. */
  openFlow?(flow: Flow): Promise<FlowSession>;
  /** The side runs flows only: its preflight is a flow. */
  flowsOnly?: boolean;
  /** What the side's processes printed lately, for diagnosing a failure. */
  output?(): string;
  /** Stops everything the side started. */
  dispose(): Promise<void>;
}
