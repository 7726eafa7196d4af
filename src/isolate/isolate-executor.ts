/**
 * `IsolateExecutor`: the native executor that runs every execution in a fresh workerd isolate,
 * from a pool of workerd processes on the host's own machine. See docs/isolate.md.
 */
import { randomUUID } from 'node:crypto';
import { type CancellableMethod, cancellationError, readSignal, untilAborted } from '../protocol/cancellation.js';
import { ExecutorError, messageOf } from '../protocol/errors.js';
import { validateProviders } from '../protocol/providers.js';
import type {
  ExecuteRequest,
  ExecuteResult,
  Executor,
  ExecutorCallOptions,
  InvokeHandleRequest,
  OutboundFetch,
} from '../protocol/types.js';
import { encodeValue } from '../protocol/value-codec.js';
import { type Confinement, type ConfinementOption, resolveConfinement } from './confinement/detect.js';
import { confinementText } from './confinement/texts.js';
import { buildEntryModule } from './entry-module.js';
import { LoopHold } from './loop-hold.js';
import { checkDelegatedCgroup } from './member-cgroup.js';
import { lowerMemberPriority } from './member-priority.js';
import { type IsolateExecutorOptions, type IsolateSettings, resolveSettings } from './options.js';
import { OutboundServer } from './outbound-server.js';
import { type AcquireCancel, Pool, type PoolStats, type PoolStatsOptions } from './pool.js';
import { assertDispatchFor, checkExecuteRequest, checkInvokeRequest, codeOverCap } from './requests.js';
import { type ProcessFate, Run, type RunOutcome, type RunSpec } from './run.js';
import { SandboxProcess } from './sandbox-process.js';
import { isolateText } from './texts.js';
import { resolveWorkerdBinary } from './workerd-binary.js';

interface RetainedExecution {
  member: SandboxProcess;
  /** Its worker's fetches still go to the outbound it was loaded with. */
  outbound: OutboundFetch | null;
}

/** Which confinement mode is in force, and why (docs/security.md). */
export interface ConfinementStats {
  /** The `confinement` option. */
  requested: ConfinementOption;
  /** Whether every member runs confined. */
  confined: boolean;
  /** What confines them, or what this host is missing. */
  reason: string;
  /** One line saying both, for a start-up log. */
  summary: string;
}

export interface IsolateExecutorStats extends PoolStats {
  /** Retained executions not yet closed. */
  retained: number;
  confinement: ConfinementStats;
}

/** One settled run (an execution or a handle call), as `observeRuns` tells it. */
export interface RunReport {
  kind: CancellableMethod;
  /** The CPU time its process spent on the run, in ms; undefined where the platform does not tell (not Linux). */
  cpuMs: number | undefined;
}

export type RunObserver = (report: RunReport) => void;

export class IsolateExecutor implements Executor {
  readonly #settings: IsolateSettings;
  readonly #pool: Pool;
  readonly #confinement: Confinement;
  readonly #retained = new Map<string, RetainedExecution>();
  readonly #runs = new Set<Run>();
  readonly #observers = new Set<RunObserver>();
  readonly #hold = new LoopHold();
  readonly #relay: OutboundServer;
  #disposing: Promise<void> | undefined;
  #cgroupChecked = false;

  constructor(options?: IsolateExecutorOptions) {
    this.#settings = resolveSettings(options);
    // Detected once per process; 'required' throws here, naming what this host is missing.
    this.#confinement = resolveConfinement(this.#settings.confinement, resolveWorkerdBinary);
    this.#relay = new OutboundServer(this.#settings.limits.maxRequestBodyBytes);
    this.#pool = new Pool(this.#settings, () => this.#launch());
  }

  /** Runs one request. Aborting `options.signal` ends its run and rejects with `EXECUTION_CANCELLED`. */
  async execute(request: ExecuteRequest, options?: ExecutorCallOptions): Promise<ExecuteResult> {
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
    return this.#hold.during(async () => {
      const member = await this.#pool.acquire(undefined, this.#cancelFor('execute', signal));
      return this.#run('execute', signal, member, {
        id,
        start: {
          t: 'run',
          run: id,
          entry,
          modules: checked.modules,
          outbound: checked.outbound !== null,
          retain: checked.retainHandles,
          bound: checked.timeout,
        },
        timeout: checked.timeout,
        cpuTimeout: checked.cpuTimeout,
        countHostWaits: checked.countHostWaits,
        dispatch: checked.dispatch,
        outbound: checked.outbound,
        retain: checked.retainHandles,
        ...(checked.retainHandles ? { executionId: id } : {}),
        ...this.#bounds(),
      });
    });
  }

  /** Calls a retained function. Aborting `options.signal` ends the call as `execute`'s does. */
  async invokeHandle(request: InvokeHandleRequest, options?: ExecutorCallOptions): Promise<ExecuteResult> {
    this.#assertOpen();
    const signal = readSignal('invokeHandle', options);
    const checked = checkInvokeRequest(request, this.#settings);
    const retained = this.#findRetained(checked.executionId);
    let args: unknown;
    try {
      args = encodeValue(checked.args);
    } catch (error) {
      throw new ExecutorError('INVALID_REQUEST', isolateText.argsUnencodable(messageOf(error)));
    }
    // Strings are quoted in the encoded form, so this token can only be a function's tag.
    if (JSON.stringify(args).includes('["f"]'))
      throw new ExecutorError('INVALID_REQUEST', isolateText.argsUnencodable(isolateText.argsHoldFunction));
    const id = randomUUID();
    return this.#hold.during(async () => {
      const member = await this.#pool.acquire(
        {
          process: retained.member,
          lost: () => new ExecutorError('HANDLE_NOT_FOUND', isolateText.executionLost(checked.executionId)),
        },
        this.#cancelFor('invokeHandle', signal),
      );
      return this.#run('invokeHandle', signal, member, {
        id,
        start: {
          t: 'invoke',
          run: id,
          exec: checked.executionId,
          handle: checked.handle,
          args,
          bound: checked.timeout,
        },
        timeout: checked.timeout,
        cpuTimeout: checked.cpuTimeout,
        countHostWaits: checked.countHostWaits,
        dispatch: checked.dispatch,
        outbound: retained.outbound,
        retain: false,
        executionId: checked.executionId,
        ...this.#bounds(),
      });
    });
  }

  async closeHandles(executionId: string): Promise<void> {
    this.#assertOpen();
    const retained = this.#retained.get(executionId);
    if (retained === undefined) return;
    this.#retained.delete(executionId);
    retained.member.send({ t: 'release', exec: executionId });
    this.#pool.closeRetained(retained.member, executionId);
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
    const { requested, confined, reason } = this.#confinement;
    return {
      ...this.#pool.stats(options),
      retained: this.#retained.size,
      confinement: { requested, confined, reason, summary: confinementText.summary(requested, confined, reason) },
    };
  }

  /**
   * Calls `observer` once for every run that settles with a result (the daemon's metrics use it).
   * Returns the function that stops it. An observer that throws is ignored: it cannot fail a run.
   */
  observeRuns(observer: RunObserver): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  #report(report: RunReport): void {
    for (const observer of this.#observers) {
      try {
        observer(report);
      } catch {
        // An observer's failure is its own; the run's outcome stands.
      }
    }
  }

  /** What every run is bounded by besides its timeout. */
  #bounds(): Pick<RunSpec, 'heapLimitMb' | 'memoryLimitMb' | 'limits'> {
    const { heapLimitMb, memoryLimitMb, limits } = this.#settings;
    return { heapLimitMb, memoryLimitMb, limits };
  }

  #assertOpen(): void {
    if (this.#disposing !== undefined) throw new ExecutorError('EXECUTOR_DISPOSED', isolateText.disposed);
  }

  #findRetained(executionId: string): RetainedExecution {
    const retained = this.#retained.get(executionId);
    if (retained === undefined) throw new ExecutorError('HANDLE_NOT_FOUND', isolateText.executionNotFound(executionId));
    if (!retained.member.alive) {
      this.#retained.delete(executionId);
      throw new ExecutorError('HANDLE_NOT_FOUND', isolateText.executionLost(executionId));
    }
    return retained;
  }

  #cancelFor(method: CancellableMethod, signal: AbortSignal | undefined): AcquireCancel | undefined {
    return signal === undefined ? undefined : { signal, error: () => cancellationError(method, signal) };
  }

  /**
   * One run in its reserved process. An abort rejects the call at once and ends the run as its
   * bound would; the process goes back to the pool only once that has settled (kept, retired or
   * killed), and the host stays held until then.
   */
  #run(
    method: CancellableMethod,
    signal: AbortSignal | undefined,
    member: SandboxProcess,
    spec: RunSpec,
  ): Promise<ExecuteResult> {
    if (signal?.aborted) {
      this.#pool.release(member, 'keep');
      return Promise.reject(cancellationError(method, signal));
    }
    const run = new Run(member, spec);
    const supervised = this.#supervise(run, member, spec);
    void supervised.then(
      (outcome) => this.#report({ kind: method, cpuMs: outcome.cpuMs }),
      () => undefined,
    );
    if (signal !== undefined) void this.#hold.during(() => supervised.catch(() => undefined));
    return untilAborted(
      method,
      signal,
      supervised.then((outcome) => outcome.result),
      () => run.cancel(),
    );
  }

  async #supervise(run: Run, member: SandboxProcess, spec: RunSpec): Promise<RunOutcome> {
    this.#runs.add(run);
    const relay = spec.outbound === null ? undefined : this.#relay;
    relay?.handle(spec.id, (request) => run.relayFetch(request));
    let fate: ProcessFate = 'keep';
    try {
      run.start();
      const outcome = await run.outcome;
      fate = outcome.fate;
      if (outcome.retained) {
        // Before the release, so the pool never recycles a process that holds it.
        this.#retained.set(spec.id, { member, outbound: spec.outbound });
        this.#pool.retain(member, spec.id);
        // Lost with its process: dropped then, so it is not counted and holds nothing of the process.
        void member.ended.then(() => {
          if (this.#retained.get(spec.id)?.member === member) this.#retained.delete(spec.id);
        });
      }
      return outcome;
    } finally {
      relay?.drop(spec.id);
      this.#runs.delete(run);
      this.#pool.release(member, fate);
    }
  }

  async #launch(): Promise<SandboxProcess> {
    try {
      const { cgroup, memoryLimitMb } = this.#settings;
      if (cgroup !== null && !this.#cgroupChecked) {
        checkDelegatedCgroup(cgroup);
        this.#cgroupChecked = true;
      }
      const member = await SandboxProcess.start({
        binary: resolveWorkerdBinary(),
        relay: this.#relay,
        heapLimitMb: this.#settings.heapLimitMb,
        limits: this.#settings.limits,
        startupTimeoutMs: this.#settings.startupTimeoutMs,
        confinement: this.#confinement.confined ? this.#confinement.plan : undefined,
        cgroup: cgroup === null ? null : { root: cgroup, memoryLimitMb },
      });
      lowerMemberPriority(member.pid, () => member.alive);
      return member;
    } catch (error) {
      if (error instanceof ExecutorError) throw error;
      throw new ExecutorError('SANDBOX_UNAVAILABLE', isolateText.sandboxUnavailable(messageOf(error)), {
        cause: error,
      });
    }
  }
}
