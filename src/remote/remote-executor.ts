/**
 * `RemoteExecutor` implements the native `Executor` contract across a capnweb WebSocket session to
 * the executor daemon. It touches no runtime-specific API, so a Worker hosts it as readily as Node.
 * What it promises is docs/remote.md.
 */
import { observeCall, type RunObservation, settleObservation } from '../events/observe-run.js';
import { type CancellableMethod, cancellationError, readSignal, untilAborted } from '../protocol/cancellation.js';
import { ExecutorError, rehydrateExecutorError } from '../protocol/errors.js';
import { messageOf } from '../protocol/message-of.js';
import type {
  ExecuteRequest,
  ExecuteResult,
  Executor,
  ExecutorCallOptions,
  InvokeHandleRequest,
  OutboundFetch,
  RunEvent,
} from '../protocol/types.js';
import { AFFINITY_HEADER } from '../wire/refusals.js';
import { resultFromWire } from '../wire/results.js';
import { DRAINING_REFUSAL } from '../wire/texts.js';
import { ClientCalls } from './client-calls.js';
import {
  type ConnectOptions,
  type ResolvedConnectOptions,
  resolveConnectOptions,
  validateUrl,
} from './connect-options.js';
import { delay } from './delay.js';
import { executeWithModuleRefs } from './module-upload.js';
import { type CallTerms, executeRequestToWire, invokeRequestToWire } from './request-to-wire.js';
import { isNotTakingSessions, Session, type SessionOptions } from './session.js';
import {
  BROKEN_DURING_CALL,
  BROKEN_DURING_EXECUTION,
  EXECUTOR_CLOSED,
  formatCallNotCarried,
  formatRequestUnusable,
} from './texts.js';

function closedError(cause?: unknown): ExecutorError {
  return new ExecutorError('CONNECTION_BROKEN', EXECUTOR_CLOSED, cause === undefined ? {} : { cause });
}

function isDrainingRefusal(error: unknown): boolean {
  return error instanceof ExecutorError && error.code === 'EXECUTOR_DISPOSED' && error.message === DRAINING_REFUSAL;
}

/** Builds a request's wire form; anything but an ExecutorError it throws becomes INVALID_REQUEST. */
function wireForm<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof ExecutorError) throw error;
    throw new ExecutorError('INVALID_REQUEST', formatRequestUnusable(messageOf(error)), { cause: error });
  }
}

/** A call's id, and the id of the call it was sent from (a nested run) when that is known. */
interface PlacedCall {
  id: string;
  parent?: string;
}

/** A call the caller may abort: its signal, and the token that names it to the daemon. */
interface CallCancel {
  method: CancellableMethod;
  signal: AbortSignal;
  token: string;
}

export class RemoteExecutor implements Executor {
  /** Every run the daemon ends carries `ending`, across the wire as it is. */
  readonly reportsEndings = true;
  readonly url: string;
  readonly #options: ResolvedConnectOptions;
  readonly #sessionOptions: SessionOptions;
  /** The session new calls run on; `undefined` after a rotation until the next call opens one. */
  #session: Session | undefined;
  /** The single-flight reopen every caller awaits. */
  #opening: Promise<Session> | undefined;
  /** Every session not yet disposed, retired ones included, so `dispose` reaches them all. */
  readonly #live = new Set<Session>();
  /** The rotation counter, raised in every execute's finally. */
  #executions = 0;
  #closed = false;
  /** Aborted by `dispose`: ends a pending handshake or backoff wait. */
  readonly #lifetime = new AbortController();
  /** Numbers the cancel tokens; the daemon keys them per connection, so a counter is unique enough. */
  #cancelTokens = 0;
  /** Names each call, and the call a nested one comes from (client-calls.ts). */
  readonly #calls = new ClientCalls();
  /** The session each call in flight was sent on: a nested call goes where its parent runs. */
  readonly #sessionOfCall = new Map<string, Session>();

  /** Builds the executor without opening it; the first call opens the session. `connect` opens it at once. */
  constructor(url: string, options: ConnectOptions = {}) {
    this.url = validateUrl(url);
    this.#options = resolveConnectOptions(options);
    const { websocket, headers, handshakeTimeoutMs, heartbeatIntervalMs, heartbeatTimeoutMs, affinity } = this.#options;
    this.#sessionOptions = {
      websocket,
      // Only an injected constructor can send headers; the affinity header goes wherever it can.
      headers: websocket === undefined ? headers : { ...headers, [AFFINITY_HEADER]: affinity },
      handshakeTimeout: handshakeTimeoutMs,
      heartbeatInterval: heartbeatIntervalMs,
      heartbeatTimeout: heartbeatTimeoutMs,
      onDispose: (session) => this.#live.delete(session),
    };
  }

  /** Opens the session now, with a single attempt, so a failure surfaces at this call. */
  async open(): Promise<void> {
    await this.#ensureSession(1);
  }

  /**
   * Runs one request at the daemon. Aborting `options.signal` rejects the call at once with
   * `EXECUTION_CANCELLED` and asks the daemon to end the run; an already-aborted one sends nothing.
   */
  async execute(request: ExecuteRequest, options?: ExecutorCallOptions): Promise<ExecuteResult> {
    const observation = observeCall('execute', options);
    return settleObservation(observation, this.#execute(request, options, observation));
  }

  async #execute(
    request: ExecuteRequest,
    options: ExecutorCallOptions | undefined,
    observation: RunObservation | null,
  ): Promise<ExecuteResult> {
    try {
      if (this.#closed) throw closedError();
      const cancel = this.#cancelFor('execute', options);
      const call = this.#place();
      const tracked = this.#calls.track(
        call.id,
        observedExecute(request, observation, this.#options.defaults.outbound),
      );
      const terms = { ...this.#terms(cancel, call), ...eventTerms(observation) };
      const wire = wireForm(() => executeRequestToWire(tracked, this.#options.defaults, terms));
      return await this.#call(
        BROKEN_DURING_EXECUTION,
        cancel,
        async (session) => resultFromWire(await executeWithModuleRefs(session.remote, wire)),
        call,
      );
    } finally {
      this.#countExecution();
    }
  }

  /** Calls a retained function at the daemon; `options.signal` and `options.onEvent` work as on `execute`. */
  async invokeHandle(request: InvokeHandleRequest, options?: ExecutorCallOptions): Promise<ExecuteResult> {
    const observation = observeCall('invokeHandle', options);
    return settleObservation(observation, this.#invokeHandle(request, options, observation));
  }

  async #invokeHandle(
    request: InvokeHandleRequest,
    options: ExecutorCallOptions | undefined,
    observation: RunObservation | null,
  ): Promise<ExecuteResult> {
    if (this.#closed) throw closedError();
    const cancel = this.#cancelFor('invokeHandle', options);
    const call = this.#place();
    // A value that is no request is the wire form's to refuse, as execute's is.
    const dispatch = (request as Partial<InvokeHandleRequest> | null)?.dispatch;
    const watched =
      observation !== null && typeof dispatch === 'function'
        ? { ...request, dispatch: observation.dispatch(dispatch) }
        : request;
    const tracked = this.#calls.track(call.id, watched);
    const terms = { ...this.#terms(cancel, call), ...eventTerms(observation) };
    const wire = wireForm(() => invokeRequestToWire(tracked, this.#options.defaults, terms));
    return this.#callHandleSurface(
      cancel,
      async (session) => resultFromWire(await session.remote.invokeHandle(wire)),
      call,
    );
  }

  async closeHandles(executionId: string): Promise<void> {
    await this.#callHandleSurface(undefined, (session) => session.remote.closeHandles(executionId));
  }

  /** Closes every session, retired ones included. Calls in flight and every later call reject with `RemoteExecutor is closed`. */
  async dispose(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#lifetime.abort(closedError());
    this.#session = undefined;
    for (const session of [...this.#live]) session.dispose();
  }

  /** The handle surface shares session acquisition with execute but skips the rotation counter. */
  async #callHandleSurface<T>(
    cancel: CallCancel | undefined,
    send: (session: Session) => Promise<T>,
    call?: PlacedCall,
  ): Promise<T> {
    if (this.#closed) throw closedError();
    return this.#call(BROKEN_DURING_CALL, cancel, send, call);
  }

  /** A fresh id for a call, and the call it is sent from when that is known. */
  #place(): PlacedCall {
    const id = this.#calls.nextId();
    const parent = this.#calls.parent();
    return parent === undefined ? { id } : { id, parent };
  }

  /**
   * The daemon gives a call up when it has not heard from this client for as long as this client
   * waits before it counts the session broken, so nothing runs on past that verdict.
   */
  #terms(cancel: CallCancel | undefined, call: PlacedCall): CallTerms {
    const { heartbeatIntervalMs, heartbeatTimeoutMs } = this.#options;
    return {
      cancelToken: cancel?.token,
      heartbeatLease: heartbeatIntervalMs + heartbeatTimeoutMs,
      callId: call.id,
      parent: call.parent,
    };
  }

  /** Validates the call's options (`INVALID_REQUEST`); a signal gets a fresh token. */
  #cancelFor(method: CancellableMethod, options: unknown): CallCancel | undefined {
    const signal = readSignal(method, options);
    if (signal === undefined) return undefined;
    this.#cancelTokens += 1;
    return { method, signal, token: String(this.#cancelTokens) };
  }

  /**
   * Acquires a session and sends the call. With a signal, an abort rejects the call at once and,
   * once the call has crossed, asks the daemon to cancel it; the session keeps counting the call
   * until the daemon answers, so a rotation does not cut that answer off.
   */
  async #call<T>(
    brokenText: string,
    cancel: CallCancel | undefined,
    send: (session: Session) => Promise<T>,
    call?: PlacedCall,
  ): Promise<T> {
    if (cancel === undefined) return this.#sendElsewhereWhileDraining(brokenText, send, call);
    const { method, signal, token } = cancel;
    // Already aborted: nothing crosses.
    if (signal.aborted) throw cancellationError(method, signal);
    let sentOn: Session | undefined;
    const work = this.#sendElsewhereWhileDraining(
      brokenText,
      (session) => {
        // Aborted while the session opened: the call has rejected already, and nothing crosses.
        if (signal.aborted) throw cancellationError(method, signal);
        sentOn = session;
        return send(session);
      },
      call,
    );
    return untilAborted(method, signal, work, () => sentOn?.cancel(token));
  }

  /**
   * A daemon that drains refuses a call before running it. That session is left (its running
   * calls finish on it) and the call goes out again on a fresh one, which a load balancer gives to
   * another daemon: not a replay, since nothing ran.
   */
  async #sendElsewhereWhileDraining<T>(
    brokenText: string,
    send: (session: Session) => Promise<T>,
    call?: PlacedCall,
  ): Promise<T> {
    for (let resent = 0; ; resent += 1) {
      const session = (resent === 0 && this.#parentSession(call)) || (await this.#ensureSession());
      if (call !== undefined) this.#sessionOfCall.set(call.id, session);
      try {
        return await this.#onSession(session, brokenText, () => send(session));
      } catch (error) {
        if (!isDrainingRefusal(error) || this.#closed || resent >= this.#options.maxReconnectAttempts) throw error;
        this.#leave(session);
      } finally {
        if (call !== undefined) this.#sessionOfCall.delete(call.id);
      }
    }
  }

  /**
   * The session a nested call's parent runs on, while it is sound: the daemon behind it is the one
   * that can admit the nested call beyond its pool, and a rotation or a retirement since does not
   * move the parent (a retired session closes only when its last call settles).
   */
  #parentSession(call: PlacedCall | undefined): Session | undefined {
    const session = call?.parent === undefined ? undefined : this.#sessionOfCall.get(call.parent);
    return session !== undefined && !session.broken ? session : undefined;
  }

  /** Stops sending new calls on a session; it closes when its running calls settle. */
  #leave(session: Session): void {
    if (this.#session === session) this.#session = undefined;
    session.retire();
  }

  async #onSession<T>(session: Session, brokenText: string, call: () => Promise<T>): Promise<T> {
    session.start();
    try {
      return await call();
    } catch (error) {
      if (this.#closed) throw closedError(error);
      // A call broken in flight is never replayed: a tool call is not idempotent.
      if (session.broken) throw new ExecutorError('CONNECTION_BROKEN', brokenText, { retryable: true, cause: error });
      const rehydrated = rehydrateExecutorError(error);
      if (rehydrated instanceof ExecutorError) throw rehydrated;
      // capnweb's own failures (a value it cannot serialize, on either side) carry no code.
      throw new ExecutorError('INVALID_REQUEST', formatCallNotCarried(messageOf(error)), { cause: error });
    } finally {
      session.settle();
    }
  }

  #countExecution(): void {
    this.#executions += 1;
    const limit = this.#options.rotateAfterExecutions;
    if (limit === undefined || this.#executions < limit) return;
    this.#executions = 0;
    const session = this.#session;
    this.#session = undefined;
    session?.retire();
  }

  #ensureSession(attempts = this.#options.reconnect ? this.#options.maxReconnectAttempts : 1): Promise<Session> {
    if (this.#closed) return Promise.reject(closedError());
    const current = this.#session;
    if (current !== undefined && !current.broken) return Promise.resolve(current);
    // Single-flight: concurrent callers after a break share one opening, so exactly one socket is opened.
    this.#opening ??= this.#reopenSession(attempts).finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #reopenSession(attempts: number): Promise<Session> {
    const previous = this.#session;
    this.#session = undefined;
    previous?.dispose();
    // A daemon that is not taking sessions (draining, full) sends the attempt elsewhere: those
    // attempts have a budget of their own, so connect()'s single attempt survives a draining daemon.
    // The 503 is known only where the WebSocket reports the status (ws does; see session.ts).
    for (let failed = 0, elsewhere = 0; ; ) {
      let session: Session;
      try {
        session = await Session.open(this.url, this.#sessionOptions, this.#lifetime.signal);
      } catch (error) {
        if (this.#closed) throw closedError(error);
        // A version mismatch never heals by retrying.
        const mismatch = error instanceof ExecutorError && error.code === 'PROTOCOL_MISMATCH';
        if (mismatch) throw error;
        if (isNotTakingSessions(error) && elsewhere < this.#options.maxReconnectAttempts) {
          elsewhere += 1;
          await delay(this.#options.backoffMs * elsewhere, this.#lifetime.signal);
          continue;
        }
        failed += 1;
        if (failed >= attempts) throw error;
        await delay(this.#options.backoffMs * failed, this.#lifetime.signal);
        continue;
      }
      this.#live.add(session);
      if (this.#closed) {
        // A dispose that arrived mid-attempt: the fresh session goes too.
        session.dispose();
        throw closedError();
      }
      this.#session = session;
      return session;
    }
  }
}

/** Builds a `RemoteExecutor` and opens its session before returning, so an unreachable daemon, a rejected connection or a version disagreement surfaces here. */
export async function connect(url: string, options?: ConnectOptions): Promise<RemoteExecutor> {
  const executor = new RemoteExecutor(url, options);
  try {
    await executor.open();
  } catch (error) {
    await executor.dispose();
    throw error;
  }
  return executor;
}

/**
 * The request with its tool calls and its fetches through this client observed: they run here,
 * so their events are measured here. A fetch through the daemon's own outbound comes from there.
 */
function observedExecute(
  request: ExecuteRequest,
  observation: RunObservation | null,
  defaultOutbound: OutboundFetch | null | undefined,
): ExecuteRequest {
  // Not a request at all: the wire form refuses it, naming why.
  if (observation === null || typeof request !== 'object' || request === null) return request;
  const watched = { ...request };
  if (typeof request.dispatch === 'function') watched.dispatch = observation.dispatch(request.dispatch);
  const outbound = request.outbound === undefined ? defaultOutbound : request.outbound;
  if (typeof outbound === 'function') watched.outbound = observation.outbound(outbound);
  return watched;
}

/**
 * What a watched call adds to its request: its span, whose child the daemon's is, and the sink of
 * the events that happen in the daemon.
 */
function eventTerms(observation: RunObservation | null): Pick<CallTerms, 'events' | 'maxQueuedEvents' | 'traceparent'> {
  if (observation === null) return {};
  const traceparent = observation.traceparent();
  if (!observation.watchesEvents) return traceparent === undefined ? {} : { traceparent };
  return {
    ...(traceparent === undefined ? {} : { traceparent }),
    maxQueuedEvents: observation.maxQueuedEvents,
    events: (events: unknown) => {
      if (!Array.isArray(events)) return;
      for (const event of events as RunEvent[]) {
        if (event?.type === 'console' && Number.isSafeInteger(event.index) && typeof event.text === 'string')
          observation.line({ level: event.level, message: event.text }, event.index);
        else if (event?.type === 'fetch') observation.forward({ ...event, elapsedMs: observation.elapsed() });
      }
    },
  };
}
