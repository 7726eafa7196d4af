/**
 * `IsolateExecutor`: the native executor that runs every execution in a fresh workerd isolate,
 * from a pool of workerd processes on the host's own machine. See docs/isolate.md. It
 * coordinates: a request is checked (requests.ts), waits for a member (the pool), runs there
 * (run/run.ts), and may leave a retained execution behind (retained-executions.ts).
 */
import { randomUUID } from 'node:crypto';
import { observeCall, type RunObservation, settleObservation } from '../../../events/observe-run.js';
import { type CancellableMethod, cancellationError, readSignal } from '../../../protocol/cancellation.js';
import { ExecutorError } from '../../../protocol/errors.js';
import { validateProviders } from '../../../protocol/providers.js';
import type {
  Dispatch,
  ExecuteRequest,
  ExecuteResult,
  Executor,
  ExecutorCallOptions,
  InvokeHandleRequest,
} from '../../../protocol/types.js';
import { isolateText } from '../../host/texts.js';
import { type Confinement, resolveConfinement } from '../confinement/detect.js';
import { launcherFor } from '../member/member-launcher.js';
import type { MemberProcess } from '../member/member-process.js';
import { memberMemory } from '../member/process-memory.js';
import { memberStartHookOf } from '../member/start-hook.js';
import { StartTimes } from '../member/start-times.js';
import { resolveWorkerdBinary } from '../member/workerd-binary.js';
import { type IsolateExecutorOptions, type IsolateSettings, resolveSettings } from '../options.js';
import { systemClock } from '../pool/clock.js';
import { Pool } from '../pool/pool.js';
import type { PoolStatsOptions } from '../pool/pool-stats.js';
import type { TenantFrame } from '../pool/tenancy.js';
import { OutboundServer } from '../relay/outbound-server.js';
import { LoopHold } from '../run/loop-hold.js';
import { Run, type RunOutcome, type RunSpec } from '../run/run.js';
import { buildEntryModule } from '../sandbox/entry-module.js';
import { executorStats, type IsolateExecutorStats } from './executor-stats.js';
import { dispatchWithinFrame, isNestedIn } from './nesting.js';
import {
  assertDispatchFor,
  checkExecuteRequest,
  checkInvokeRequest,
  codeOverCap,
  encodeInvokeArgs,
} from './requests.js';
import {
  type RetainedClosedObserver,
  RetainedExecutions,
  type RetainedIdle,
  type RetainSlot,
} from './retained-executions.js';
import { type RunObserver, RunObservers } from './run-observers.js';

/** `execute`'s and `invokeHandle`'s options, with the one term only this executor reads. */
export interface IsolateCallOptions extends ExecutorCallOptions {
  /**
   * The daemon's client the call runs for, held to its share of `pool.memoryBudgetMb` while
   * another is present (a `Tenancy`'s `frame`). In-process callers leave it out.
   */
  share?: TenantFrame | undefined;
  /**
   * The caller's own bound on how long what this call retains may go unused (a daemon's
   * `--retained-idle-timeout-ms`): the execution is closed at it or at `pool.retainedIdleTimeoutMs`,
   * whichever is shorter, by the executor's one idle timer, and `observeRetainedClosed` says which.
   */
  retainedIdle?: RetainedIdle | undefined;
}

export class IsolateExecutor implements Executor {
  /** Every run it ends carries `ending`. */
  readonly reportsEndings = true;
  readonly #settings: IsolateSettings;
  readonly #pool: Pool<MemberProcess>;
  readonly #confinement: Confinement;
  readonly #retained: RetainedExecutions<MemberProcess>;
  readonly #runs = new Set<Run>();
  /** The runs each busy member serves (several at the tenant level), so the pool's budget can end them with its text. */
  readonly #runsOn = new Map<MemberProcess, Set<Run>>();
  readonly #observers = new RunObservers();
  readonly #hold = new LoopHold();
  readonly #relay: OutboundServer;
  readonly #startTimes = new StartTimes();
  #disposing: Promise<void> | undefined;

  constructor(options?: IsolateExecutorOptions) {
    this.#settings = resolveSettings(options);
    // Detected once per process; 'required' throws here, naming what this host is missing.
    this.#confinement = resolveConfinement(this.#settings.confinement, resolveWorkerdBinary);
    this.#relay = new OutboundServer(this.#settings.limits.maxRequestBodyBytes);
    this.#retained = new RetainedExecutions(this.#settings, (member, executionId) => {
      if (member.alive) member.send({ t: 'release', exec: executionId });
      this.#pool.retainedClosed(member);
    });
    this.#pool = new Pool({
      settings: this.#settings,
      launch: launcherFor(this.#settings, this.#confinement, this.#relay, this.#startTimes, memberStartHookOf(options)),
      clock: systemClock,
      retainedOn: (member) => this.#retained.heldBy(member),
      measure: memberMemory,
      overBudget: (member, { usedMb, budgetMb, memberMb }) =>
        this.#endRunsOn(member, (run) => run.endOverBudget({ usedMb, budgetMb, memberMb })),
      evict: (member, cause) =>
        this.#retained.evict(
          member,
          cause === 'gone' ? isolateText.executionEvictedGone : isolateText.executionEvicted,
        ),
      reclaim: (member, { heldMb, shareMb, percent }) =>
        this.#endRunsOn(member, (run) => run.endForTenantShare({ heldMb, shareMb, percent })),
    });
  }

  /**
   * Runs one request. Aborting `options.signal` ends its run and rejects with `EXECUTION_CANCELLED`;
   * `options.onEvent` receives its events (docs/observing.md).
   */
  async execute(request: ExecuteRequest, options?: IsolateCallOptions): Promise<ExecuteResult> {
    const observation = observeCall('execute', options);
    return settleObservation(observation, this.#execute(request, options, observation));
  }

  async #execute(
    request: ExecuteRequest,
    options: IsolateCallOptions | undefined,
    observation: RunObservation | null,
  ): Promise<ExecuteResult> {
    this.#assertOpen();
    const signal = readSignal('execute', options);
    const checked = checkExecuteRequest(request, this.#settings);
    const oversized = codeOverCap(checked.code, this.#settings.limits);
    if (oversized !== null) return { result: undefined, error: oversized, logs: [] };
    const rejection = validateProviders(checked.providers);
    if (rejection !== null) return { result: undefined, error: rejection, logs: [] };
    assertDispatchFor(checked);
    const id = randomUUID();
    const entry = buildEntryModule(checked.code, checked.providers);
    const nested = isNestedIn(this);
    // Counted from here until its run has settled (and retained it or not): see #supervise.
    const slot = checked.retainHandles ? this.#retained.reserve(options?.retainedIdle) : undefined;
    const spec: RunSpec = {
      id,
      start: {
        t: 'run',
        run: id,
        entry,
        modules: checked.modules,
        outbound: checked.outbound !== null,
        retain: checked.retainHandles,
        bound: checked.timeout,
        ...(observation !== null ? { live: true } : {}),
      },
      ...this.#callTerms(checked, observation, checked.outbound),
      retain: checked.retainHandles,
      ...(checked.retainHandles ? { executionId: id } : {}),
    };
    // One that retains handles keeps its process to itself, so it never shares one.
    const tenant = { key: checked.tenant, share: options?.share };
    const acquire = (withdrawn: AbortSignal) =>
      this.#pool.acquire(undefined, withdrawn, nested, tenant, !checked.retainHandles);
    return this.#hold.during(() => this.#run('execute', signal, acquire, slot, observation, spec));
  }

  /** Calls a retained function. `options.signal` and `options.onEvent` work as on `execute`. */
  async invokeHandle(request: InvokeHandleRequest, options?: IsolateCallOptions): Promise<ExecuteResult> {
    const observation = observeCall('invokeHandle', options);
    return settleObservation(observation, this.#invokeHandle(request, options, observation));
  }

  async #invokeHandle(
    request: InvokeHandleRequest,
    options: IsolateCallOptions | undefined,
    observation: RunObservation | null,
  ): Promise<ExecuteResult> {
    this.#assertOpen();
    const signal = readSignal('invokeHandle', options);
    const checked = checkInvokeRequest(request, this.#settings);
    const retained = this.#retained.find(checked.executionId);
    const args = encodeInvokeArgs(checked.args);
    const id = randomUUID();
    const nested = isNestedIn(this);
    // Not idle while the call is in flight: its time-to-live starts again once the last one settles.
    this.#retained.beginCall(retained);
    const spec: RunSpec = {
      id,
      start: {
        t: 'invoke',
        run: id,
        exec: checked.executionId,
        handle: checked.handle,
        args,
        bound: checked.timeout,
        ...(observation !== null ? { live: true } : {}),
      },
      ...this.#callTerms(checked, observation, retained.outbound),
      retain: false,
      executionId: checked.executionId,
    };
    const lost = () => new ExecutorError('HANDLE_NOT_FOUND', isolateText.executionLost(checked.executionId));
    const acquire = (withdrawn: AbortSignal) =>
      this.#pool.acquire({ process: retained.member, lost }, withdrawn, nested, { share: options?.share });
    const call = this.#hold.during(() => this.#run('invokeHandle', signal, acquire, undefined, observation, spec));
    const callEnded = () => this.#retained.endCall(checked.executionId, retained);
    void call.then(callEnded, callEnded);
    return call;
  }

  /** Releases the execution's worker; its process, which served it alone, ends. */
  async closeHandles(executionId: string): Promise<void> {
    this.#assertOpen();
    this.#retained.close(executionId, isolateText.executionClosed(executionId));
  }

  /**
   * Calls `observer` with the id of each retained execution the executor closes on its own, and
   * why: idle past `pool.retainedIdleTimeoutMs` (`idle`) or past its call's `retainedIdle`
   * (`callerIdle`), lost with its process (`lost`), or evicted (`evicted`); not those
   * `closeHandles` closed. A daemon uses it to drop what it keeps for that execution, its view of
   * the executor's. Returns the function that stops it.
   */
  observeRetainedClosed(observer: RetainedClosedObserver): () => void {
    return this.#retained.observeClosed(observer);
  }

  /** Ends every process and rejects queued and running work with `EXECUTOR_DISPOSED`. */
  dispose(): Promise<void> {
    if (this.#disposing === undefined) {
      const disposed = new ExecutorError('EXECUTOR_DISPOSED', isolateText.disposed);
      for (const run of this.#runs) run.abort(disposed);
      this.#retained.clear();
      // Held: the processes' pipes are unref'd, so awaiting their exit alone would not keep the
      // host's event loop running.
      this.#disposing = this.#hold.during(async () => {
        await this.#pool.dispose();
        await this.#relay.close();
      });
    }
    return this.#disposing;
  }

  /**
   * A snapshot of the pool, for monitoring and the benchmark. `{pss: true}` also reads each
   * member's proportional set size, which costs about a millisecond per member on Linux.
   */
  stats(options?: PoolStatsOptions): IsolateExecutorStats {
    const retained = {
      retained: this.#retained.size,
      maxRetained: this.#settings.maxRetained,
      retainedOldestIdleMs: this.#retained.oldestIdleMs(),
    };
    return executorStats(this.#pool.stats(options), retained, this.#confinement, this.#startTimes.stats());
  }

  /**
   * Calls `observer` once for every run that settles with a result (the daemon's metrics use it).
   * Returns the function that stops it. An observer that throws is ignored: it cannot fail a run.
   */
  observeRuns(observer: RunObserver): () => void {
    return this.#observers.add(observer);
  }

  /** What every run is bounded by besides its timeout. */
  /**
   * What a run of either call takes from its checked request, its observation and its outbound
   * (the request's own for `execute`, the retained execution's for `invokeHandle`): its clocks,
   * its channels to the host, observed when the call is, and the executor's bounds.
   */
  #callTerms(
    checked: Pick<RunSpec, 'timeout' | 'cpuTimeout' | 'countHostWaits'> & { dispatch: Dispatch | null | undefined },
    observation: RunObservation | null,
    outbound: RunSpec['outbound'],
  ): Omit<RunSpec, 'id' | 'start' | 'retain' | 'executionId'> {
    return {
      timeout: checked.timeout,
      cpuTimeout: checked.cpuTimeout,
      countHostWaits: checked.countHostWaits,
      dispatch: this.#framed(observed(observation, checked.dispatch)),
      outbound: observation !== null && typeof outbound === 'function' ? observation.outbound(outbound) : outbound,
      ...linesTo(observation),
      ...this.#bounds(),
    };
  }

  #bounds(): Pick<RunSpec, 'heapLimitMb' | 'memoryLimitMb' | 'limits' | 'turnGraceMs' | 'programStartTimeoutMs'> {
    const { heapLimitMb, memoryLimitMb, limits, turnGraceMs, programStartTimeoutMs } = this.#settings;
    return { heapLimitMb, memoryLimitMb, limits, turnGraceMs, programStartTimeoutMs };
  }

  /** Every run in that member is told why: the pool is ending its process. */
  #endRunsOn(member: MemberProcess, end: (run: Run) => void): void {
    for (const run of [...(this.#runsOn.get(member) ?? [])]) end(run);
  }

  #assertOpen(): void {
    if (this.#disposing !== undefined) throw new ExecutorError('EXECUTOR_DISPOSED', isolateText.disposed);
  }

  /** Every tool call of a run made inside a frame naming this executor, so a run it starts is seen as nested. */
  #framed(dispatch: Dispatch | null | undefined): Dispatch | null | undefined {
    return typeof dispatch === 'function' ? dispatchWithinFrame(this, dispatch) : dispatch;
  }

  /**
   * One run, from its call: it waits for a process (`acquire`, which it withdraws from once it is
   * over), then runs there. Its caller's abort is an event of the run's ending table wherever the
   * run is, waiting or running, and the table decides the answer: the call is answered with its
   * cancellation at once, and a run that has a process is given up; the process goes back to the
   * pool only once that has settled (kept, retired or killed), and the host stays held until then.
   */
  async #run(
    method: CancellableMethod,
    signal: AbortSignal | undefined,
    acquire: (withdrawn: AbortSignal) => Promise<MemberProcess>,
    slot: RetainSlot<MemberProcess> | undefined,
    observation: RunObservation | null,
    spec: RunSpec,
  ): Promise<ExecuteResult> {
    const run = new Run(spec);
    if (signal !== undefined) {
      const cancel = () => run.cancel(cancellationError(method, signal));
      // Aborted already: the run ends before it waits for a process.
      if (signal.aborted) cancel();
      else {
        signal.addEventListener('abort', cancel, { once: true });
        void run.outcome.finally(() => signal.removeEventListener('abort', cancel)).catch(() => undefined);
      }
    }
    const member = await acquire(run.withdrawn).catch((reason: unknown) => {
      // Withdrawn (the run is over already, and this changes nothing), or refused a process.
      run.unserved(reason);
      return undefined;
    });
    if (member === undefined) {
      slot?.free();
      return run.answer;
    }
    const supervised = this.#supervise(run, member, slot, spec);
    // Every run its process served is reported, a cancelled one too: its CPU time was spent.
    const report = (cpuMs: number | undefined) => this.#observers.report({ kind: method, cpuMs });
    void supervised.then(
      (outcome) => {
        // Before the call settles (this reaction was registered first), so `end` carries it.
        if (observation !== null) observation.cpuMs = outcome.cpuMs;
        report(outcome.cpuMs);
      },
      (error: unknown) => {
        if (run.started && error instanceof ExecutorError && error.code === 'EXECUTION_CANCELLED') report(run.cpuMs);
      },
    );
    if (signal !== undefined) void this.#hold.during(() => supervised.catch(() => undefined));
    return run.answer;
  }

  async #supervise(
    run: Run,
    member: MemberProcess,
    slot: RetainSlot<MemberProcess> | undefined,
    spec: RunSpec,
  ): Promise<RunOutcome> {
    this.#runs.add(run);
    const on = this.#runsOn.get(member) ?? new Set<Run>();
    on.add(run);
    this.#runsOn.set(member, on);
    const relay = spec.outbound === null ? undefined : this.#relay;
    relay?.handle(spec.id, (request) => run.relayFetch(request));
    try {
      run.start(member);
      const outcome = await run.outcome;
      // Before the release, so the pool never gives the process another execution.
      if (outcome.retained) slot?.fill(spec.id, member, spec.outbound);
      return outcome;
    } finally {
      slot?.free();
      relay?.drop(spec.id);
      this.#runs.delete(run);
      on.delete(run);
      if (on.size === 0) this.#runsOn.delete(member);
      this.#pool.release(member, run.fate);
    }
  }
}

/** The dispatch with its calls observed, when the call asked for events. */
function observed(
  observation: RunObservation | null,
  dispatch: Dispatch | null | undefined,
): Dispatch | null | undefined {
  return observation !== null && typeof dispatch === 'function' ? observation.dispatch(dispatch) : dispatch;
}

/** Where the sandbox's live console lines go, when the call asked for events. */
function linesTo(observation: RunObservation | null): Pick<RunSpec, 'onLine'> {
  return observation === null ? {} : { onLine: (entry, index) => observation.line(entry, index) };
}
