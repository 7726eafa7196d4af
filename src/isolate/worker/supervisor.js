// @ts-check
// The supervisor worker of one workerd pool member. It accepts exactly one WebSocket, from the
// host that spawned it (the token binding proves that), loads every run as a fresh dynamic
// worker through the Worker Loader binding, and relays the run's tool calls and outbound fetches
// to the host over that socket. The message grammar is channel.ts, evaluated here as a module.
import { RpcTarget, WorkerEntrypoint } from 'cloudflare:workers';
import createChannelGrammar from 'channel-grammar.js';
import createRelayCodec from 'relay-codec.js';
import createValueCodec from 'value-codec.js';

/** @typedef {import('../channel.js').HostMessage} HostMessage */
/** @typedef {import('../channel.js').SupervisorMessage} SupervisorMessage */
/** @typedef {import('../channel.js').DoneMessage} DoneMessage */
/** @typedef {import('../channel.js').AnswerMessage} AnswerMessage */
/** @typedef {import('../worker-settings.js').SupervisorSettings} SupervisorSettings */

const codec = createValueCodec(() => undefined);
const grammar = createChannelGrammar();
const relay = createRelayCodec();

/** The host's socket, once it connected. @type {WebSocket | null} */
let socket = null;
let nextAsk = 1;
/** ask id → the resolver of a question put to the host (a tool call). @type {Map<number, {resolve: (answer: AnswerMessage) => void, reject: (error: Error) => void}>} */
const asks = new Map();
/** run id → the worker a run in flight is executing in (for `cancel`). @type {Map<string, SandboxWorker>} */
const live = new Map();
/** execution id → the worker of a retained execution. @type {Map<string, SandboxWorker>} */
const retained = new Map();
/** outbound route (the id of the run that loaded the worker) → the run currently answering for it. @type {Map<string, string>} */
const routes = new Map();

/** @param {SupervisorMessage} message */
function send(message) {
  if (socket !== null) socket.send(JSON.stringify(message));
}

/**
 * Puts a tool call to the host; resolves with its answer.
 * @param {{run: string, provider: string, tool: string, args: string}} call
 * @param {SupervisorSettings} current
 * @returns {Promise<AnswerMessage>}
 */
function ask(call, current) {
  return new Promise((resolve, reject) => {
    if (socket === null) {
      reject(new Error(current.hostGone));
      return;
    }
    const id = nextAsk++;
    asks.set(id, { resolve, reject });
    send({ t: 'call', ask: id, ...call });
  });
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

/** The sandbox's way back to the host: one per run, so the host can attribute every call. */
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

  /**
   * @param {string} provider
   * @param {string} tool
   * @param {string} args
   */
  async call(provider, tool, args) {
    const answer = await ask({ run: this.#run, provider, tool, args }, this.#settings);
    return answer.envelope;
  }
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
    const run = routes.get(this.ctx.props.route);
    if (run === undefined) throw new Error(settings.outboundAfterRun);
    const nullBody = request.body === null;
    const body = nullBody ? new Uint8Array() : new Uint8Array(await request.arrayBuffer());
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
 * The lines a worker captured, and whether its run settled in time. One that never started had no clock running.
 * @param {SandboxWorker} worker
 * @returns {Promise<{logs: LogEntry[], inTime: boolean}>}
 */
async function snapshotOf(worker) {
  try {
    return await worker.getEntrypoint().snapshot();
  } catch {
    return { logs: [], inTime: true };
  }
}

/**
 * Turns one sandbox call's outcome into the `done` message. Never throws.
 * @param {string} run
 * @param {SandboxWorker} worker
 * @param {() => Promise<SettledRun | {missing: true}>} call
 * @returns {Promise<DoneMessage>}
 */
async function settle(run, worker, call) {
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
      return { t: 'done', run, outcome: 'value', value: codec.encode(out.value), logs, inTime };
    } catch (error) {
      return { t: 'done', run, outcome: 'fault', fault: messageOf(error), logs, inTime };
    }
  } finally {
    // Stubs inside an RPC result live until disposed; this connection's context never ends.
    disposeQuietly(out);
  }
}

/**
 * @param {import('../channel.js').RunMessage} message
 * @param {SupervisorEnv} env
 * @param {ExecutionContext} ctx
 * @param {SupervisorSettings} current
 */
async function runExecution(message, env, ctx, current) {
  /** @type {SandboxWorker} */
  let worker;
  try {
    worker = env.LOADER.load({
      compatibilityDate: current.compatibilityDate,
      compatibilityFlags: current.compatibilityFlags,
      mainModule: current.entryModule,
      modules: { ...message.modules, [current.entryModule]: message.entry, [current.harnessModule]: env.HARNESS },
      globalOutbound: message.outbound ? ctx.exports.Outbound({ props: { route: message.run } }) : null,
    });
  } catch (error) {
    send({ t: 'done', run: message.run, outcome: 'fault', fault: messageOf(error), logs: [], inTime: true });
    return;
  }
  live.set(message.run, worker);
  routes.set(message.run, message.run);
  const reply = await settle(message.run, worker, () => {
    return worker.getEntrypoint().evaluate(new Bridge(message.run, current), {
      run: message.run,
      bound: message.bound,
      retain: message.retain,
    });
  });
  live.delete(message.run);
  if (message.retain && reply.outcome === 'value') {
    retained.set(message.run, worker);
  } else {
    routes.delete(message.run);
    disposeQuietly(worker);
  }
  send(reply);
}

/**
 * @param {import('../channel.js').InvokeMessage} message
 * @param {SupervisorSettings} current
 */
async function runInvocation(message, current) {
  const worker = retained.get(message.exec);
  if (worker === undefined) {
    send({ t: 'done', run: message.run, outcome: 'missing', logs: [], inTime: true });
    return;
  }
  live.set(message.run, worker);
  routes.set(message.exec, message.run);
  const reply = await settle(message.run, worker, async () => {
    // Inside the call, so an argument the codec refuses is a fault of this run.
    const args = codec.decode(message.args);
    const bridge = new Bridge(message.run, current);
    const options = { run: message.run, bound: message.bound };
    return worker.getEntrypoint().invoke(message.handle, Array.isArray(args) ? args : [], bridge, options);
  });
  live.delete(message.run);
  send(reply);
}

/**
 * The host gave up on a run: at its bound (`race`: the sandbox's race decides whether it still won)
 * or because its caller went away. A run that won sends its own `done`; one that lost is answered
 * with `cancelled` and the lines it logged.
 * @param {import('../channel.js').CancelMessage} message
 */
async function cancel(message) {
  const worker = live.get(message.run);
  // Settled already: its `done` went first.
  if (worker === undefined) return;
  /** @type {RaceVerdict} */
  let verdict;
  try {
    verdict = await worker.getEntrypoint().cancel(message.run, message.race);
  } catch {
    // The worker cannot answer (it failed to start, or broke): the run's own `done` says why.
    return;
  }
  if (!verdict.won) send({ t: 'cancelled', run: message.run, logs: verdict.logs });
}

/** @param {import('../channel.js').ReleaseMessage} message */
function release(message) {
  const worker = retained.get(message.exec);
  retained.delete(message.exec);
  routes.delete(message.exec);
  disposeQuietly(worker);
}

/** @param {AnswerMessage} message */
function answer(message) {
  const pending = asks.get(message.ask);
  if (pending === undefined) return;
  asks.delete(message.ask);
  pending.resolve(message);
}

/**
 * @param {HostMessage} message
 * @param {SupervisorEnv} env
 * @param {ExecutionContext} ctx
 * @param {SupervisorSettings} current
 * @returns {Promise<void> | void}
 */
function receive(message, env, ctx, current) {
  switch (message.t) {
    case 'run':
      return runExecution(message, env, ctx, current);
    case 'invoke':
      return runInvocation(message, current);
    case 'cancel':
      return cancel(message);
    case 'release':
      return release(message);
    case 'answer':
      return answer(message);
  }
}

/** @type {ExportedHandler<SupervisorEnv>} */
export default {
  fetch(request, env, ctx) {
    const current = env.SETTINGS;
    const authorized = request.headers.get(current.tokenHeader) === current.token;
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
        console.error(current.supervisorFailure + current.messageMalformed);
        return;
      }
      Promise.resolve()
        .then(() => receive(message, env, ctx, current))
        .catch((error) => console.error(current.supervisorFailure + messageOf(error)));
    });
    server.addEventListener('close', () => {
      socket = null;
      for (const pending of asks.values()) pending.reject(new Error(current.hostGone));
      asks.clear();
    });
    return new Response(null, { status: 101, webSocket: pair[0] });
  },
};
