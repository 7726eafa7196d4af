// @ts-check
// The supervisor worker of one workerd pool member. It accepts exactly one WebSocket, from the
// host that spawned it (the token binding proves that), and relays every run's tool calls,
// outbound fetches and outcome between the host and the run's dynamic worker. The message grammar
// is channel.ts, evaluated here as a module.
//
// Request contexts. The socket belongs to the request that upgraded it, which lives as long as
// the host is connected. Runs do not execute in it: each run is a call of the `Runner`
// entrypoint through `ctx.exports`, so it gets a request context of its own, and everything the
// run created (its worker, every stub, every timer, `waitUntil` work) ends with that context.
// workerd ties I/O objects to the context that made them, so a run reaches the socket only
// through its `Bridge`, an RPC target that lives in the socket's context. Plain module state
// (the maps below) is shared by every context, which is how the socket's context hands a
// `cancel`, an `invoke` or a `release` to the run it is for.
import { RpcTarget, WorkerEntrypoint } from 'cloudflare:workers';
import createChannelGrammar from 'channel-grammar.js';
import createExpandedSizer from 'expanded-size.js';
import createRelayCodec from 'relay-codec.js';
import createValueCodec from 'value-codec.js';

/** @typedef {import('../channel.js').HostMessage} HostMessage */
/** @typedef {import('../channel.js').SupervisorMessage} SupervisorMessage */
/** @typedef {import('../channel.js').DoneMessage} DoneMessage */
/** @typedef {import('../channel.js').RunMessage} RunMessage */
/** @typedef {import('../channel.js').InvokeMessage} InvokeMessage */
/** @typedef {import('../worker-settings.js').SupervisorSettings} SupervisorSettings */

/**
 * What the socket's context tells a run: a `cancel` (with its `race` flag) once one arrived.
 * @typedef {object} RunControl
 * @property {boolean | null} cancel
 * @property {() => void} wake Set by the run while it waits; called after `cancel` is set.
 */

/**
 * A retained execution's Runner, waiting for its next request (`null` releases it).
 * @typedef {(request: InvokeMessage | null) => void} Keeper
 */

const codec = createValueCodec(() => undefined);
const grammar = createChannelGrammar();
const relay = createRelayCodec();
const expandedSize = createExpandedSizer();
const encoder = new TextEncoder();

/** The host's socket, once it connected. @type {WebSocket | null} */
let socket = null;
let nextAsk = 1;
/** ask id → the resolver of a tool call put to the host. @type {Map<number, {resolve: (envelope: string) => void, reject: (error: Error) => void}>} */
const asks = new Map();
/** run id → what the socket's context tells the run in flight. @type {Map<string, RunControl>} */
const controls = new Map();
/** execution id → the Runner keeping it. @type {Map<string, Keeper>} */
const keepers = new Map();
/** execution id → its bridge, while its Runner runs (the socket's side). @type {Map<string, Bridge>} */
const bridges = new Map();
/** outbound route (the id of the run that loaded the worker) → the run currently answering for it. @type {Map<string, string>} */
const routes = new Map();
/** outbound route → its fetches in flight, bounded by `limits.maxConcurrentFetches`. @type {Map<string, number>} */
const fetchesInFlight = new Map();

/** @param {SupervisorMessage} message */
function send(message) {
  if (socket !== null) socket.send(JSON.stringify(message));
}

/** @param {unknown} value */
function disposeQuietly(value) {
  try {
    if (typeof value === 'object' && value !== null && Symbol.dispose in value) {
      const dispose = value[Symbol.dispose];
      if (typeof dispose === 'function') dispose.call(value);
    }
  } catch {
    // Already disposed, or not disposable: nothing is held either way.
  }
}

/** @param {unknown} error */
function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A run's way to the host, living in the socket's context: its tool calls and its outcome. One
 * per execution; an invocation of a retained execution reuses its execution's bridge, renamed
 * to the invocation's run so the host can attribute every call.
 */
class Bridge extends RpcTarget {
  #run;
  #settings;

  /**
   * @param {string} run
   * @param {SupervisorSettings} settings
   */
  constructor(run, settings) {
    super();
    this.#run = run;
    this.#settings = settings;
  }

  /** @param {string} run */
  rename(run) {
    this.#run = run;
  }

  /**
   * Puts a tool call to the host; resolves with the envelope it answers.
   * @param {string} provider
   * @param {string} tool
   * @param {string} args
   * @returns {Promise<string>}
   */
  call(provider, tool, args) {
    const run = this.#run;
    const hostGone = this.#settings.hostGone;
    return new Promise((resolve, reject) => {
      if (socket === null) {
        reject(new Error(hostGone));
        return;
      }
      const ask = nextAsk++;
      const text = JSON.stringify({ t: 'call', run, ask, provider, tool, args });
      const size = overFrameCap(text, this.#settings);
      if (size !== null) {
        reject(new Error(this.#settings.callTooLarge.replace('{size}', String(size))));
        return;
      }
      asks.set(ask, { resolve, reject });
      socket.send(text);
    });
  }

  /**
   * A run's `done` or `cancelled`, already JSON: it crosses from the run's context as one string
   * (cheaper than the value's tree, and bounded by workerd's RPC limit) and goes out as it is.
   * @param {string} text
   */
  report(text) {
    if (socket !== null) socket.send(text);
  }
}

/**
 * A request's body, read only up to `limits.maxRequestBodyBytes`: one over it fails the fetch
 * before anything is sent.
 * @param {Request} request
 * @param {SupervisorSettings} settings
 * @returns {Promise<Uint8Array>}
 */
async function readCapped(request, settings) {
  const declared = Number(request.headers.get('content-length'));
  if (declared > settings.maxRequestBodyBytes) throw new Error(settings.requestBodyTooLarge);
  const reader = request.body?.getReader();
  if (reader === undefined) return new Uint8Array();
  /** @type {Uint8Array[]} */
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > settings.maxRequestBodyBytes) {
      await reader.cancel();
      throw new Error(settings.requestBodyTooLarge);
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * The UTF-8 size of a frame over `maxFrameBytes`, or null when it fits: the host's socket closes
 * on a larger one, which would end the member for what is a size over a cap.
 * @param {string} text
 * @param {SupervisorSettings} settings
 * @returns {number | null}
 */
function overFrameCap(text, settings) {
  // Three bytes at most per UTF-16 unit: most frames are measured without encoding them.
  if (text.length * 3 <= settings.maxFrameBytes) return null;
  const size = encoder.encode(text).byteLength;
  return size > settings.maxFrameBytes ? size : null;
}

/** A unit V8 cannot store in a one-byte string. */
const TWO_BYTE_UNIT = /[\u0100-\uffff]/;

/**
 * The size of an outcome frame over what the channel carries, or null when it fits: the host's
 * frame cap (UTF-8), and before it workerd's RPC from the run's context to the socket's, which
 * serializes a string at one byte a unit, or two once any unit needs them.
 * @param {string} text
 * @param {SupervisorSettings} settings
 * @returns {number | null}
 */
function overOutcomeCaps(text, settings) {
  const frame = overFrameCap(text, settings);
  if (frame !== null) return frame;
  if (text.length <= settings.maxOutcomeRpcBytes / 2) return null;
  const serialized = TWO_BYTE_UNIT.test(text) ? 2 * text.length : text.length;
  return serialized > settings.maxOutcomeRpcBytes ? serialized : null;
}

/**
 * Sends a run's outcome to the host through its bridge; one too large for the channel becomes a
 * fault saying so, with the run's logs when they fit beside it.
 * @param {RunBridge} bridge
 * @param {SupervisorMessage} message
 * @param {SupervisorSettings} settings
 */
function report(bridge, message, settings) {
  const text = messageText(message);
  const size = overOutcomeCaps(text, settings);
  if (size === null) return bridge.report(text);
  const fault = settings.outcomeTooLarge.replace('{size}', String(size));
  const inTime = message.t === 'done' ? message.inTime : false;
  const logs = message.t === 'call' ? [] : message.logs;
  const withLogs = JSON.stringify({ t: 'done', run: message.run, outcome: 'fault', fault, logs, inTime });
  if (overOutcomeCaps(withLogs, settings) === null) return bridge.report(withLogs);
  return bridge.report(JSON.stringify({ t: 'done', run: message.run, outcome: 'fault', fault, logs: [], inTime }));
}

/**
 * The `globalOutbound` of a run whose fetches the host answers. It runs in a request context of
 * its own, where the host's WebSocket is out of reach, so it relays over the HOST binding.
 * @extends {WorkerEntrypoint<SupervisorEnv, OutboundProps>}
 */
export class Outbound extends WorkerEntrypoint {
  /**
   * @override
   * @param {Request} request
   */
  async fetch(request) {
    const settings = this.env.SETTINGS;
    const route = this.ctx.props.route;
    const run = routes.get(route);
    if (run === undefined) throw new Error(settings.outboundAfterRun);
    const inFlight = fetchesInFlight.get(route) ?? 0;
    if (inFlight >= settings.maxConcurrentFetches) throw new Error(settings.tooManyFetches);
    fetchesInFlight.set(route, inFlight + 1);
    try {
      return await this.#relay(request, run, settings);
    } finally {
      const left = (fetchesInFlight.get(route) ?? 1) - 1;
      if (left === 0) fetchesInFlight.delete(route);
      else fetchesInFlight.set(route, left);
    }
  }

  /**
   * @param {Request} request
   * @param {string} run
   * @param {SupervisorSettings} settings
   */
  async #relay(request, run, settings) {
    const nullBody = request.body === null;
    const body = nullBody ? new Uint8Array() : await readCapped(request, settings);
    const head = { url: request.url, method: request.method, headers: [...request.headers], nullBody };
    const relayed = await this.env.HOST.fetch('http://host/outbound', {
      method: 'POST',
      headers: { [relay.tokenHeader]: settings.hostToken, [relay.runHeader]: run },
      body: relay.encodeRequest(head, body),
    });
    const reply = relay.decodeReply(new Uint8Array(await relayed.arrayBuffer()));
    if (reply === null) throw new Error(settings.relayMalformed);
    if (!reply.head.ok) throw new Error(reply.head.error);
    const { status, statusText, headers } = reply.head;
    return new Response(reply.head.nullBody ? null : reply.body, { status, statusText, headers });
  }
}

/**
 * The lines a worker captured, and whether its run settled in time. One that never started had
 * no clock running.
 * @param {SandboxWorker} worker
 * @returns {Promise<{logs: LogEntry[], inTime: boolean}>}
 */
async function snapshotOf(worker) {
  const entrypoint = worker.getEntrypoint();
  try {
    return await entrypoint.snapshot();
  } catch {
    return { logs: [], inTime: true };
  } finally {
    disposeQuietly(entrypoint);
  }
}

/** A `done` message's value as JSON, already made to measure it. @type {WeakMap<object, string>} */
const valueJson = new WeakMap();

/**
 * A message as its frame's text. A value measured as JSON goes in as that text, not stringified
 * again.
 * @param {SupervisorMessage} message
 * @returns {string}
 */
function messageText(message) {
  const json = valueJson.get(message);
  if (json === undefined || message.t !== 'done' || message.outcome !== 'value') return JSON.stringify(message);
  const { value: _measured, ...rest } = message;
  const head = JSON.stringify(rest);
  return `${head.slice(0, -1)},"value":${json}}`;
}

/** Where the encoded JSON holds a shared reference: inside a JSON string, a `"` is escaped. */
const SHARED_REFERENCE = '["x",';

/**
 * The encoded value and its JSON, or the text saying it is over `limits.maxResultBytes`: checked
 * here, before anything is sent, so the host never receives a value over its cap. A value holding
 * shared references is measured as it expands (expanded-size.js), since that is what a host that
 * serializes it writes.
 * @param {unknown} value
 * @param {SupervisorSettings} settings
 * @returns {{value: unknown, json: string} | {fault: string}}
 */
function encodeCapped(value, settings) {
  const encoded = codec.encode(value);
  const json = JSON.stringify(encoded);
  let size = encoder.encode(json).byteLength;
  if (size <= settings.maxResultBytes && json.includes(SHARED_REFERENCE)) size = expandedSize(encoded);
  if (size <= settings.maxResultBytes) return { value: encoded, json };
  const shown = Number.isSafeInteger(size) ? String(size) : `more than ${Number.MAX_SAFE_INTEGER}`;
  return { fault: settings.resultTooLarge.replace('{size}', shown) };
}

/**
 * Turns one sandbox call's outcome into the `done` message. Never throws.
 * @param {string} run
 * @param {SandboxWorker} worker
 * @param {SupervisorSettings} settings
 * @param {() => Promise<SettledRun | {missing: true}>} call
 * @returns {Promise<DoneMessage>}
 */
async function settle(run, worker, settings, call) {
  /** @type {SettledRun | {missing: true}} */
  let out;
  try {
    out = await call();
  } catch (error) {
    // The worker failed to start (a syntax error, a throwing module), or its result could not be
    // serialized: the text is the runtime's own.
    const { logs, inTime } = await snapshotOf(worker);
    return { t: 'done', run, outcome: 'fault', fault: messageOf(error), logs, inTime };
  }
  try {
    if ('missing' in out) return { t: 'done', run, outcome: 'missing', logs: [], inTime: true };
    const { logs, inTime } = out;
    if (!out.ok) return { t: 'done', run, outcome: 'threw', error: out.error, logs, inTime };
    try {
      const encoded = encodeCapped(out.value, settings);
      if ('fault' in encoded) return { t: 'done', run, outcome: 'fault', fault: encoded.fault, logs, inTime };
      /** @type {DoneMessage} */
      const done = { t: 'done', run, outcome: 'value', value: encoded.value, logs, inTime };
      valueJson.set(done, encoded.json);
      return done;
    } catch (error) {
      return { t: 'done', run, outcome: 'fault', fault: messageOf(error), logs, inTime };
    }
  } finally {
    // An RPC result holds the stubs inside it until disposed.
    disposeQuietly(out);
  }
}

/**
 * Runs one call in a worker until it settles, or until the host gives it up: then the sandbox's
 * race says whether it still won (its `done` follows) or lost (`cancelled`, with its lines).
 * @param {string} run
 * @param {SandboxWorker} worker
 * @param {SupervisorSettings} settings
 * @param {(entrypoint: Fetcher<SandboxEntrypoint>) => Promise<SettledRun | {missing: true}>} call
 * @returns {Promise<SupervisorMessage>}
 */
async function supervise(run, worker, settings, call) {
  const control = controls.get(run) ?? { cancel: null, wake: () => {} };
  const entrypoint = worker.getEntrypoint();
  try {
    const settled = settle(run, worker, settings, () => call(entrypoint));
    /** @type {Promise<boolean>} */
    const cancelled = new Promise((resolve) => {
      const race = control.cancel;
      if (race !== null) resolve(race);
      else control.wake = () => resolve(control.cancel === true);
    });
    const first = await Promise.race([settled, cancelled]);
    if (typeof first !== 'boolean') return first;
    /** @type {RaceVerdict} */
    let verdict;
    try {
      verdict = await entrypoint.cancel(run, first);
    } catch {
      // The worker cannot answer (it failed to start, or broke): the run's own `done` says why.
      return await settled;
    }
    return verdict.won ? await settled : { t: 'cancelled', run, logs: verdict.logs };
  } finally {
    controls.delete(run);
    disposeQuietly(entrypoint);
  }
}

/**
 * Where every run executes: a call of this entrypoint has a request context of its own. An
 * execution's call returns once it is reported; a retained one's stays, holding its worker, and
 * runs each invocation of it, until it is released.
 * @extends {WorkerEntrypoint<SupervisorEnv>}
 */
export class Runner extends WorkerEntrypoint {
  /**
   * @param {RunMessage} message
   * @param {RunBridge} bridge
   */
  async execute(message, bridge) {
    const settings = this.env.SETTINGS;
    // A pending timer: workerd cancels, as hung, a request that waits only on other contexts.
    const keepAlive = setInterval(() => {}, 0x7fffffff);
    /** @type {SandboxWorker | undefined} */
    let worker;
    try {
      try {
        worker = this.env.LOADER.load({
          compatibilityDate: settings.compatibilityDate,
          compatibilityFlags: settings.compatibilityFlags,
          mainModule: settings.entryModule,
          modules: {
            ...message.modules,
            [settings.entryModule]: message.entry,
            [settings.harnessModule]: this.env.HARNESS,
          },
          globalOutbound: message.outbound ? this.ctx.exports.Outbound({ props: { route: message.run } }) : null,
        });
      } catch (error) {
        // No supervise() to end it: its control goes here.
        controls.delete(message.run);
        await report(
          bridge,
          {
            t: 'done',
            run: message.run,
            outcome: 'fault',
            fault: messageOf(error),
            logs: [],
            inTime: true,
          },
          settings,
        );
        return;
      }
      const loaded = worker;
      routes.set(message.run, message.run);
      const options = {
        run: message.run,
        bound: message.bound,
        retain: message.retain,
      };
      const reply = await supervise(message.run, loaded, settings, (entrypoint) =>
        entrypoint.evaluate(bridge.dup(), options),
      );
      if (!message.retain || reply.t !== 'done' || reply.outcome !== 'value') {
        await report(bridge, reply, settings);
        return;
      }
      await this.#keep(message.run, loaded, bridge, reply);
    } finally {
      routes.delete(message.run);
      clearInterval(keepAlive);
      disposeQuietly(worker);
    }
  }

  /**
   * Serves a retained execution's invocations, one at a time, until it is released.
   * @param {string} exec
   * @param {SandboxWorker} worker
   * @param {RunBridge} bridge
   * @param {SupervisorMessage} reply The execution's own `done`, reported once this keeper waits.
   */
  async #keep(exec, worker, bridge, reply) {
    try {
      let next = this.#nextRequest(exec);
      await report(bridge, reply, this.env.SETTINGS);
      for (;;) {
        const request = await next;
        if (request === null) return;
        next = this.#nextRequest(exec);
        routes.set(exec, request.run);
        const invocation = await supervise(request.run, worker, this.env.SETTINGS, async (entrypoint) => {
          // Inside the call, so an argument the codec refuses is a fault of this run.
          const args = codec.decode(request.args);
          const options = { run: request.run, bound: request.bound };
          return entrypoint.invoke(request.handle, Array.isArray(args) ? args : [], bridge.dup(), options);
        });
        await report(bridge, invocation, this.env.SETTINGS);
      }
    } finally {
      keepers.delete(exec);
    }
  }

  /**
   * @param {string} exec
   * @returns {Promise<InvokeMessage | null>}
   */
  #nextRequest(exec) {
    return new Promise((next) => keepers.set(exec, next));
  }
}

/**
 * The host gave up on a run: at its bound (`race`), or because its caller went away.
 * @param {import('../channel.js').CancelMessage} message
 */
function cancel(message) {
  // No control: the run is over (its reply is on its way). One that has not reached its worker
  // yet finds the request in its control.
  const control = controls.get(message.run);
  if (control === undefined) return;
  control.cancel = message.race;
  control.wake();
}

/** @param {InvokeMessage} message */
function invoke(message) {
  const keeper = keepers.get(message.exec);
  if (keeper === undefined) {
    send({ t: 'done', run: message.run, outcome: 'missing', logs: [], inTime: true });
    return;
  }
  keepers.delete(message.exec);
  bridges.get(message.exec)?.rename(message.run);
  controls.set(message.run, { cancel: null, wake: () => {} });
  keeper(message);
}

/** @param {import('../channel.js').ReleaseMessage} message */
function release(message) {
  const keeper = keepers.get(message.exec);
  keepers.delete(message.exec);
  keeper?.(null);
}

/** @param {import('../channel.js').AnswerMessage} message */
function answer(message) {
  const pending = asks.get(message.ask);
  if (pending === undefined) return;
  asks.delete(message.ask);
  pending.resolve(message.envelope);
}

/**
 * @param {HostMessage} message
 * @param {SupervisorEnv} env
 * @param {ExecutionContext} ctx
 */
function receive(message, env, ctx) {
  const settings = env.SETTINGS;
  switch (message.t) {
    case 'run': {
      const run = message.run;
      // Made here, so a `cancel` that overtakes the Runner's start is not lost.
      controls.set(run, { cancel: null, wake: () => {} });
      const bridge = new Bridge(run, settings);
      bridges.set(run, bridge);
      ctx.exports.Runner.execute(message, bridge)
        .catch((error) => {
          controls.delete(run);
          // The Runner itself failed (workerd refused the call): the run still gets its `done`.
          send({ t: 'done', run, outcome: 'fault', fault: messageOf(error), logs: [], inTime: true });
        })
        .finally(() => bridges.delete(run));
      return;
    }
    case 'invoke':
      invoke(message);
      return;
    case 'cancel':
      cancel(message);
      return;
    case 'release':
      release(message);
      return;
    case 'answer':
      answer(message);
      return;
  }
}

/** @type {ExportedHandler<SupervisorEnv>} */
export default {
  fetch(request, env, ctx) {
    const settings = env.SETTINGS;
    const authorized = request.headers.get(settings.tokenHeader) === settings.token;
    if (socket !== null || !authorized || request.headers.get('upgrade') !== 'websocket') {
      return new Response(null, { status: 403 });
    }
    const pair = new WebSocketPair();
    const server = pair[1];
    server.accept();
    socket = server;
    server.addEventListener('message', (event) => {
      const message = typeof event.data === 'string' ? grammar.parseHostMessage(event.data) : null;
      if (message === null) {
        console.error(settings.supervisorFailure + settings.messageMalformed);
        return;
      }
      try {
        receive(message, env, ctx);
      } catch (error) {
        console.error(settings.supervisorFailure + messageOf(error));
      }
    });
    server.addEventListener('close', () => {
      socket = null;
      for (const pending of asks.values()) pending.reject(new Error(settings.hostGone));
      asks.clear();
    });
    return new Response(null, { status: 101, webSocket: pair[0] });
  },
};
