/**
 * The one runner. It opens columns (starts a side, then checks it answers a trivial execution),
 * runs a case on a column under one guard, and settles the cell with the rules of judge.ts. The
 * vitest spec, the matrix and the case command are each a thin loop over it.
 *
 * A column that cannot open makes each of its cells an infra-error with the reason; one that stops
 * answering mid-run does the same for every later cell, at once, instead of letting each wait out
 * its own deadline. After `abort()` (Ctrl-C) nothing new starts and every column is stopped.
 */
import { messageOf } from '../src/protocol/index.js';
import type { Boundary, Case, LoadedCase, Outcome } from './case-model.js';
import { type ColumnId, describeColumn } from './columns.js';
import { brief, checkExpectation } from './expect.js';
import type { Flow, FlowOutcome, LoadedFlow } from './flow-model.js';
import { checkFlow, runFlow } from './flows.js';
import { isFlow, type Observation, type Plan, planCell, settleCell } from './judge.js';
import { CaseLane, MAX_CASES_TOGETHER } from './lanes.js';
import { LONG_WAITS } from './long-cases.js';
import { flowModules, runWithPackages } from './packages.js';
import type { MatrixCell, MatrixColumn } from './report/model.js';
import type { Side } from './side-model.js';
import { startSide } from './sides.js';
import { texts } from './texts.js';
import { holdsLaneAlone } from './timing.js';

/** Beyond a case's own bound (upstream's longest default is 60 s): loading, the round trip, a busy machine. */
const DEFAULT_CASE_TIMEOUT_MS = 60_000;
const GUARD_GRACE_MS = 60_000;
/**
 * What wrangler dev answers a request in flight when its workerd died and it started another.
 * Under load, workerd 1.20260426 sometimes aborts while the 0.4.4 column runs runtime flows ("tried
 * to defer destruction during isolate shutdown"): a crash of the reference's platform, not a
 * result of the case (docs/reference-columns.md).
 */
const WORKER_RESTARTED = /Your worker restarted mid-request/;
/** How many fresh starts a column that died gets before it is broken (Engine.reopen). */
const REOPEN_STARTS = 2;
/** How long a column may take to answer again after such a restart, and how often it is asked. */
const RESTART_WAIT_MS = 20_000;
const RESTART_POLL_MS = 500;

/** A side that needs this long for `6 * 7` is broken. */
const PREFLIGHT_GUARD_MS = 30_000;
/** How much of a side's output a failure quotes. */
const OUTPUT_TAIL = 4 * 1024;

export const PREFLIGHT_CASE: Case = {
  id: 'preflight',
  description: 'The side answers a trivial execution',
  features: [],
  code: 'async () => 6 * 7',
  expect: { result: 42 },
};

/** The trivial flow a side that runs flows only must pass before its column opens. */
const PREFLIGHT_FLOW: Flow = {
  id: 'preflight-flow',
  description: 'The side completes a trivial runtime execution',
  features: [],
  connectors: [],
  steps: [
    {
      execute: 'async () => 6 * 7',
      expect: { value: { status: 'completed', executionId: '<#1>', result: 42, logs: { any: true }, calls: [] } },
    },
  ],
};

/** How long the engine waits for one case before it calls the cell an infra-error. */
function guardMs(item: Case | Flow): number {
  if (isFlow(item)) return DEFAULT_CASE_TIMEOUT_MS + GUARD_GRACE_MS;
  return (item.options?.timeout ?? DEFAULT_CASE_TIMEOUT_MS) + GUARD_GRACE_MS;
}

/** The longest one `cell()` can take: the case's guard, then the preflight that checks the side still answers. */
export function cellDeadlineMs(item: Case | Flow): number {
  return guardMs(item) + PREFLIGHT_GUARD_MS;
}

function withGuard<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(texts.cell.noOutcome(ms))), ms);
  });
  return Promise.race([work, guard]).finally(() => clearTimeout(timer));
}

export type SideStarter = (name: ColumnId) => Promise<Side>;

interface ColumnState {
  opening: Promise<void>;
  side?: Side;
  /** Why the column did not open. */
  failure?: string;
  /** Where and why it stopped answering. */
  broken?: string;
}

/** One cell as the engine settled it, with the outcome it judged (none when nothing ran). */
export interface CellResult {
  cell: MatrixCell;
  outcome?: Outcome | FlowOutcome;
}

const deduplicated = new WeakSet<object>();

/**
 * Prints each distinct `console.warn` text once per process: the dialect warns on every call that
 * passes a bare record, and a run makes hundreds of calls.
 */
export function printEachWarningOnce(target: { warn(...args: unknown[]): void } = console): void {
  if (deduplicated.has(target)) return;
  deduplicated.add(target);
  const seen = new Set<string>();
  const warn = target.warn.bind(target);
  target.warn = (...args: unknown[]) => {
    const text = args.map(String).join(' ');
    if (seen.has(text)) return;
    seen.add(text);
    warn(...args);
  };
}

export class Engine {
  private readonly columns = new Map<ColumnId, ColumnState>();
  /** Each column's cases start in the order asked, a long one waiting beside the next (lanes.ts). */
  private readonly lanes = new Map<ColumnId, CaseLane>();
  /** Each column started afresh after its process died: at most once, shared by the cases that met it. */
  private readonly reopenings = new Map<ColumnId, Promise<boolean>>();
  /** Cases known to wait long (long-cases.ts), then those that ran long on some column: a column may start them first. */
  private readonly longCases = new Set<string>(LONG_WAITS);
  /** Each column as installed, read once. */
  private readonly described = new Map<ColumnId, MatrixColumn>();
  private aborted = false;

  constructor(
    private readonly boundaries: ReadonlyMap<string, Boundary>,
    private readonly starter: SideStarter = startSide,
  ) {
    printEachWarningOnce();
  }

  get isAborted(): boolean {
    return this.aborted;
  }

  /** The column as the report describes it: its label, versions, and why it cannot run, if so. */
  describe(id: ColumnId): MatrixColumn {
    let column = this.described.get(id);
    if (!column) this.described.set(id, (column = describeColumn(id)));
    return column;
  }

  /** What the case means on the column: run, skip (still run) or unsupported. */
  plan(item: Case | Flow, column: ColumnId): Plan {
    return planCell(item, this.describe(column), this.boundaries);
  }

  /** Starts the columns not started yet, at most `parallelism` at once; never rejects. */
  async openAll(names: readonly ColumnId[], parallelism = 2): Promise<void> {
    const queue = [...new Set(names)];
    const lane = async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) await this.open(name);
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(parallelism, queue.length)) }, lane));
  }

  /** Opens the column once; resolves with why it could not open, or undefined when it is up. */
  async open(name: ColumnId): Promise<string | undefined> {
    let state = this.columns.get(name);
    if (!state) {
      const fresh: ColumnState = { opening: Promise.resolve() };
      fresh.opening = this.start(name, fresh);
      this.columns.set(name, (state = fresh));
    }
    await state.opening;
    return state.failure;
  }

  /**
   * Runs the case on the column (opening it if needed) and settles the cell. Never rejects. Cells
   * asked for at once run in the order asked, through the column's lane.
   */
  async cell(item: LoadedCase | LoadedFlow, name: ColumnId): Promise<CellResult> {
    const plan = this.plan(item, name);
    if (plan.kind === 'unsupported') return { cell: settleCell(item, name, plan, undefined) };
    // The column opens before the case holds the lane, so opening does not count as running long.
    // A case that involves time holds the lane alone; the others share it (lanes.ts, timing.ts).
    const observation = await this.lane(name).run(
      item.id,
      () => this.observe(item, name),
      this.open(name),
      holdsLaneAlone(item),
    );
    const cell = settleCell(item, name, plan, observation);
    return observation.kind === 'outcome' ? { cell, outcome: observation.outcome } : { cell };
  }

  /** The column's cases running past the lane's bound, for the progress line. */
  waitingOn(name: ColumnId): readonly string[] {
    return this.lanes.get(name)?.waiting ?? [];
  }

  /** The ids of the cases known to wait long, then of those that ran past the lane's bound on any column so far. */
  get knownLong(): ReadonlySet<string> {
    return this.longCases;
  }

  /** Resolves once every cell asked of the column has started and none holds its lane. */
  whenLaneFree(name: ColumnId): Promise<void> {
    return this.lane(name).whenFree();
  }

  private lane(name: ColumnId): CaseLane {
    let lane = this.lanes.get(name);
    if (!lane) {
      // Under wrangler dev (the reference columns, ours-worker), cases run one at a time: 0.3.8's
      // dropped requests when three shared it on a loaded machine. Our executor shares its lane.
      const underWrangler = this.describe(name).kind === 'reference' || name === 'ours-worker';
      const together = underWrangler ? 1 : MAX_CASES_TOGETHER;
      lane = new CaseLane(undefined, undefined, (id) => this.longCases.add(id), together);
      this.lanes.set(name, lane);
    }
    return lane;
  }

  /** Stops one column, once its cases are done; its later cells are infra-errors. */
  async close(name: ColumnId): Promise<void> {
    const state = this.columns.get(name);
    if (!state) return;
    await state.opening;
    const side = state.side;
    delete state.side;
    state.broken ??= texts.cell.columnClosed;
    await side?.dispose();
  }

  /** Stops every column (waiting for starts still under way); the first failure is rethrown. */
  async closeAll(): Promise<void> {
    const states = [...this.columns.values()];
    await Promise.all(states.map((state) => state.opening));
    const results = await Promise.allSettled(states.map((state) => state.side?.dispose()));
    for (const state of states) delete state.side;
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Ctrl-C: no new case or column starts, and every column is stopped. */
  async abort(): Promise<void> {
    this.aborted = true;
    await this.closeAll().catch(() => undefined);
  }

  private async start(name: ColumnId, state: ColumnState): Promise<void> {
    if (this.aborted) {
      state.failure = texts.cell.interrupted;
      return;
    }
    // A column that cannot run (its release could not be read or resolved) says why, not what starting it would break on.
    const cannotRun = this.describe(name).infraError;
    if (cannotRun !== undefined) {
      state.failure = cannotRun;
      return;
    }
    try {
      state.side = await this.starter(name);
    } catch (error) {
      state.failure = messageOf(error);
      return;
    }
    const problem = await this.preflight(state.side);
    if (problem !== undefined) {
      state.failure = problem;
      const side = state.side;
      delete state.side;
      await side.dispose().catch(() => undefined); // The failure above is the news.
    }
  }

  /** Why the side does not answer the trivial execution correctly, or undefined when it does. */
  private async preflight(side: Side): Promise<string | undefined> {
    let problem: string | undefined;
    const preflight = side.flowsOnly ? texts.flow.preflight : texts.preflight;
    try {
      if (side.flowsOnly) {
        const outcome = await withGuard(this.runFlowOn(side, PREFLIGHT_FLOW), PREFLIGHT_GUARD_MS);
        if (checkFlow(PREFLIGHT_FLOW, outcome).length > 0) problem = preflight(side.name, brief(outcome));
      } else {
        const outcome = await withGuard(side.run(PREFLIGHT_CASE), PREFLIGHT_GUARD_MS);
        if (checkExpectation(PREFLIGHT_CASE.expect, outcome).length > 0) problem = preflight(side.name, brief(outcome));
      }
    } catch (error) {
      problem = preflight(side.name, messageOf(error));
    }
    return problem === undefined ? undefined : texts.withOutput(problem, side.output?.().slice(-OUTPUT_TAIL) ?? '');
  }

  private async runFlowOn(side: Side, flow: Flow): Promise<FlowOutcome> {
    if (!side.openFlow) throw new Error(texts.cell.noFlows(side.name));
    const modules = await flowModules(flow.packages);
    return runFlow(flow, await side.openFlow(flow), modules);
  }

  private async observe(item: LoadedCase | LoadedFlow, name: ColumnId): Promise<Observation> {
    let firstReason: string | undefined;
    for (let attempt = 1; ; attempt += 1) {
      const failure = await this.open(name);
      if (failure !== undefined) return { kind: 'infra-error', reason: texts.cell.columnUnavailable(failure) };
      const state = this.columns.get(name)!;
      if (state.broken !== undefined) return { kind: 'infra-error', reason: state.broken };
      if (this.aborted || !state.side) return { kind: 'infra-error', reason: texts.cell.interrupted };
      try {
        const work = isFlow(item) ? this.runFlowOn(state.side, item) : runWithPackages(state.side, item);
        return { kind: 'outcome', outcome: await withGuard<Outcome | FlowOutcome>(work, guardMs(item)) };
      } catch (error) {
        const reason =
          firstReason === undefined ? messageOf(error) : texts.cell.failedAgain(firstReason, messageOf(error));
        if (this.aborted) return { kind: 'infra-error', reason };
        // A failed request runs once more from its start: on a loaded machine wrangler dev drops a
        // request now and then, and a case whose own doing it is fails the same way twice. A side
        // that no longer answers 6 * 7 has died. When wrangler dev says its workerd died under the
        // request, the column is given the time to answer again (wrangler may start another
        // workerd). A column that does not answer is started afresh, once per column; after that,
        // a column that does not answer is broken.
        const restarted = WORKER_RESTARTED.test(reason);
        // Another case on the column may have closed its side meanwhile (it broke, or is reopening).
        if (state.side === undefined) return { kind: 'infra-error', reason };
        const problem = restarted ? await this.answersAgain(state.side) : await this.preflight(state.side);
        if (attempt === 1 && (problem === undefined || (await this.reopen(name, state)))) {
          firstReason = reason;
          continue;
        }
        if (problem !== undefined) state.broken ??= texts.cell.columnBroke(item.id, `${reason}\n${problem}`);
        // What the column printed last is where a crash of the reference's platform shows.
        return {
          kind: 'infra-error',
          reason: texts.withOutput(reason, state.side?.output?.().slice(-OUTPUT_TAIL) ?? ''),
        };
      }
    }
  }

  /**
   * Stops a column whose process died and opens it afresh, at most once per column: the cases
   * that met the dead process share one reopening. A fresh start that does not answer its preflight
   * is stopped and started again, up to `REOPEN_STARTS` starts: on a loaded machine wrangler dev
   * has printed its ready line and died within seconds, twice in a row. Whether the new one opened.
   */
  private reopen(name: ColumnId, dead: ColumnState): Promise<boolean> {
    const reopening = this.reopenings.get(name);
    if (reopening !== undefined) return reopening;
    const fresh = (async () => {
      const side = dead.side;
      delete dead.side;
      await side?.dispose().catch(() => undefined); // Its death is the news.
      for (let start = 1; ; start += 1) {
        this.columns.delete(name);
        // A start that failed its preflight has stopped its side already (start()).
        if ((await this.open(name)) === undefined) return true;
        if (start === REOPEN_STARTS || this.aborted) return false;
      }
    })();
    this.reopenings.set(name, fresh);
    return fresh;
  }

  /** The preflight's problem until the side answers again, for at most `RESTART_WAIT_MS`: undefined once it does. */
  private async answersAgain(side: Side): Promise<string | undefined> {
    const deadline = Date.now() + RESTART_WAIT_MS;
    for (;;) {
      const problem = await this.preflight(side);
      if (problem === undefined || this.aborted || Date.now() > deadline) return problem;
      await new Promise((resolve) => setTimeout(resolve, RESTART_POLL_MS));
    }
  }
}
