// The supervisor worker of one workerd pool member. It accepts exactly one WebSocket, from the
// host that spawned it (the token binding proves that), loads every run as a fresh dynamic
// worker through the Worker Loader binding, and relays the run's tool calls and outbound fetches
// to the host over that socket. The message grammar is documented in docs/isolate.md.
import { RpcTarget, WorkerEntrypoint } from 'cloudflare:workers';
import createValueCodec from 'value-codec.js';

const codec = createValueCodec(() => undefined);

/** The SETTINGS binding, kept once the host connects (module scope has no env). */
let settings = null;
let socket = null;
let nextAsk = 1;
/** ask id → resolver of a question put to the host (a tool call, a fetch). */
const asks = new Map();
/** run id → the worker a run in flight is executing in (for `cancel`). */
const live = new Map();
/** execution id → the worker of a retained execution. */
const retained = new Map();
/** outbound route (the id of the run that loaded the worker) → the run currently answering for it. */
const routes = new Map();

function send(message) {
  if (socket !== null) socket.send(JSON.stringify(message));
}

function ask(message) {
  return new Promise((resolve, reject) => {
    if (socket === null) {
      reject(new Error(settings.hostGone));
      return;
    }
    const id = nextAsk++;
    asks.set(id, { resolve, reject });
    send({ ...message, ask: id });
  });
}

function disposeQuietly(value) {
  try {
    value?.[Symbol.dispose]?.();
  } catch {
    // Already disposed, or not disposable: nothing is held either way.
  }
}

function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

/** The sandbox's way back to the host: one per run, so the host can attribute every call. */
class Bridge extends RpcTarget {
  #run;

  constructor(run) {
    super();
    this.#run = run;
  }

  async call(provider, tool, args) {
    const answer = await ask({ t: 'call', run: this.#run, p: provider, n: tool, a: args });
    return answer.v;
  }
}

/** One relay frame: a 4-byte big-endian head length, the JSON head, the body bytes. */
function encodeFrame(head, body) {
  const headBytes = new TextEncoder().encode(JSON.stringify(head));
  const frame = new Uint8Array(4 + headBytes.length + body.byteLength);
  new DataView(frame.buffer).setUint32(0, headBytes.length);
  frame.set(headBytes, 4);
  frame.set(new Uint8Array(body), 4 + headBytes.length);
  return frame;
}

function decodeFrame(buffer) {
  const length = new DataView(buffer).getUint32(0);
  const head = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, length)));
  return { head, body: buffer.slice(4 + length) };
}

/**
 * The `globalOutbound` of a run whose fetches the host answers. It runs in a request context of
 * its own, where the host's WebSocket is out of reach, so it relays over the HOST binding.
 */
export class Outbound extends WorkerEntrypoint {
  async fetch(request) {
    const run = routes.get(this.ctx.props.route);
    if (run === undefined || settings === null) throw new Error(this.env.SETTINGS.outboundAfterRun);
    const nullBody = request.body === null;
    const body = nullBody ? new ArrayBuffer(0) : await request.arrayBuffer();
    const relayed = await this.env.HOST.fetch('http://host/outbound', {
      method: 'POST',
      headers: { 'x-codemode-token': settings.hostToken, 'x-codemode-run': run },
      body: encodeFrame({ u: request.url, m: request.method, h: [...request.headers], nb: nullBody }, body),
    });
    const { head, body: responseBody } = decodeFrame(await relayed.arrayBuffer());
    if (typeof head.error === 'string') throw new Error(head.error);
    return new Response(head.nb ? null : responseBody, { status: head.s, statusText: head.st, headers: head.h });
  }
}

/** The lines a worker captured, and whether its run settled in time. One that never started had no clock running. */
async function snapshotOf(worker) {
  try {
    return await worker.getEntrypoint().snapshot();
  } catch {
    return { logs: [], inTime: true };
  }
}

/** Turns one sandbox call's outcome into the `done` message. Never throws. */
async function settle(run, worker, call) {
  let out;
  try {
    out = await call();
  } catch (error) {
    // The worker failed to start (a syntax error, a throwing module), or its result could not be
    // serialized: the text is the runtime's own.
    const { logs, inTime } = await snapshotOf(worker);
    return { t: 'done', run, fault: messageOf(error), logs, inTime };
  }
  try {
    if (out.missing) return { t: 'done', run, missing: true, logs: [], inTime: true };
    if (out.ok) return { t: 'done', run, ok: true, v: codec.encode(out.value), logs: out.logs, inTime: out.inTime };
    return { t: 'done', run, ok: false, error: out.error, logs: out.logs, inTime: out.inTime };
  } catch (error) {
    return { t: 'done', run, fault: messageOf(error), logs: out.logs ?? [], inTime: out.inTime };
  } finally {
    // Stubs inside an RPC result live until disposed; this connection's context never ends.
    disposeQuietly(out);
  }
}

async function runExecution(message, env, ctx) {
  let worker;
  try {
    worker = env.LOADER.load({
      compatibilityDate: settings.compatibilityDate,
      compatibilityFlags: settings.compatibilityFlags,
      mainModule: settings.entryModule,
      modules: { ...message.modules, [settings.entryModule]: message.entry, [settings.harnessModule]: env.HARNESS },
      globalOutbound: message.outbound ? ctx.exports.Outbound({ props: { route: message.run } }) : null,
    });
  } catch (error) {
    send({ t: 'done', run: message.run, fault: messageOf(error), logs: [], inTime: true });
    return;
  }
  live.set(message.run, worker);
  routes.set(message.run, message.run);
  const reply = await settle(message.run, worker, () =>
    worker
      .getEntrypoint()
      .evaluate(new Bridge(message.run), { run: message.run, bound: message.bound, retain: message.retain === true }),
  );
  live.delete(message.run);
  if (message.retain === true && reply.ok === true) {
    retained.set(message.run, worker);
  } else {
    routes.delete(message.run);
    disposeQuietly(worker);
  }
  send(reply);
}

async function runInvocation(message) {
  const worker = retained.get(message.exec);
  if (worker === undefined) {
    send({ t: 'done', run: message.run, missing: true, logs: [], inTime: true });
    return;
  }
  live.set(message.run, worker);
  routes.set(message.exec, message.run);
  const reply = await settle(message.run, worker, () =>
    worker.getEntrypoint().invoke(message.handle, codec.decode(message.args), new Bridge(message.run), {
      run: message.run,
      bound: message.bound,
    }),
  );
  live.delete(message.run);
  send(reply);
}

/**
 * The host gave up on a run: at its bound (`race`: the sandbox's race decides whether it still won)
 * or because its caller went away. A run that won sends its own `done`; one that lost is answered
 * with `cancelled` and the lines it logged.
 */
async function cancel(message) {
  const worker = live.get(message.run);
  // Settled already: its `done` went first.
  if (worker === undefined) return;
  let verdict;
  try {
    verdict = await worker.getEntrypoint().cancel(message.run, message.race === true);
  } catch {
    // The worker cannot answer (it failed to start, or broke): the run's own `done` says why.
    return;
  }
  if (!verdict.won) send({ t: 'cancelled', run: message.run, logs: verdict.logs });
}

function release(message) {
  const worker = retained.get(message.exec);
  retained.delete(message.exec);
  routes.delete(message.exec);
  disposeQuietly(worker);
}

function answer(message) {
  const pending = asks.get(message.ask);
  if (pending === undefined) return;
  asks.delete(message.ask);
  pending.resolve(message);
}

function receive(message, env, ctx) {
  switch (message.t) {
    case 'run':
      return runExecution(message, env, ctx);
    case 'invoke':
      return runInvocation(message);
    case 'cancel':
      return cancel(message);
    case 'release':
      return release(message);
    case 'answer':
      return answer(message);
    default:
      return undefined;
  }
}

export default {
  fetch(request, env, ctx) {
    const authorized = request.headers.get('x-codemode-token') === env.SETTINGS.token;
    if (socket !== null || !authorized || request.headers.get('upgrade') !== 'websocket') {
      return new Response(null, { status: 403 });
    }
    const pair = new WebSocketPair();
    const server = pair[1];
    server.accept();
    settings = env.SETTINGS;
    socket = server;
    server.addEventListener('message', (event) => {
      Promise.resolve()
        .then(() => receive(JSON.parse(event.data), env, ctx))
        .catch((error) => console.error(settings.supervisorFailure + messageOf(error)));
    });
    server.addEventListener('close', () => {
      socket = null;
      for (const pending of asks.values()) pending.reject(new Error(settings.hostGone));
      asks.clear();
    });
    return new Response(null, { status: 101, webSocket: pair[0] });
  },
};
