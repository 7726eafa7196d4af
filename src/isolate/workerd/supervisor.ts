/**
 * The supervisor worker of one workerd pool member, bundled at build time
 * (scripts/bundle-workers.ts). It accepts exactly one WebSocket, from the host that spawned it
 * (the token binding proves that), and relays every run's tool calls, outbound fetches and
 * outcome between the host and the run's dynamic worker. The message grammar is channel.ts.
 *
 * Request contexts. The socket belongs to the request that upgraded it, which lives as long as
 * the host is connected. Runs do not execute in it: each run is a call of the `Runner`
 * entrypoint through `ctx.exports`, so it gets a request context of its own, and everything the
 * run created (its worker, every stub, every timer, `waitUntil` work) ends with that context.
 * workerd ties I/O objects to the context that made them, so a run reaches the socket only
 * through its `Bridge` (host-link.ts), an RPC target that lives in the socket's context. Plain
 * module state (the maps below, and those of host-link.ts, run-race.ts and outbound.ts) is shared
 * by every context, which is how the socket's context hands a `cancel`, an `invoke` or a
 * `release` to the run it is for.
 */
import { WorkerEntrypoint } from 'cloudflare:workers';
import { messageOf } from '../../protocol/message-of.js';
import { createChannelGrammar } from '../contract/channel.js';
import type { HostMessage, InvokeMessage, RunMessage, SupervisorMessage } from '../contract/messages.js';
import { supervisorText } from '../contract/texts.js';
import { answer, Bridge, connectHost, disconnectHost, hostConnected, send } from './host-link.js';
import { closeRoute, openRoute } from './outbound.js';
import { disposeQuietly, doneMessage, report, valueCodec } from './outcome-frames.js';
import { cancelRun, closeControl, openControl, supervise } from './run-race.js';
import type { AskId, ExecutionId, RouteId, RunId, SandboxBridge, SandboxWorker, SupervisorEnv } from './types.js';

export { Outbound } from './outbound.js';

/** `ctx.exports` (the `enable_ctx_exports` flag of the supervisor): its own entrypoints, as bindings. */
interface SupervisorExports {
  Outbound(options: { props: { route: RouteId } }): Fetcher;
  Runner: { execute(message: RunMessage, bridge: Bridge): Promise<void> };
}

/**
 * The bridge as a Runner holds it: a stub, whose copies passed on in a call's parameters are
 * disposed when that call returns (so each call gets a `dup()`).
 */
interface RunBridge extends SandboxBridge {
  report(text: string): Promise<void>;
  dup(): RunBridge;
}

/** A retained execution's Runner, waiting for its next request (`null` releases it). */
type Keeper = (request: InvokeMessage | null) => void;

const grammar = createChannelGrammar();

/** execution id → the Runner keeping it. */
const keepers = new Map<ExecutionId, Keeper>();
/** execution id → its bridge, while its Runner runs (the socket's side). */
const bridges = new Map<ExecutionId, Bridge>();

/**
 * Where every run executes: a call of this entrypoint has a request context of its own. An
 * execution's call returns once it is reported; a retained one's stays, holding its worker, and
 * runs each invocation of it, until it is released.
 */
export class Runner extends WorkerEntrypoint<SupervisorEnv> {
  async execute(message: RunMessage, bridge: RunBridge): Promise<void> {
    const settings = this.env.SETTINGS;
    const run = message.run as RunId;
    const route = message.run as RouteId;
    // A pending timer: workerd cancels, as hung, a request that waits only on other contexts.
    const keepAlive = setInterval(() => {}, 0x7fffffff);
    let worker: SandboxWorker | undefined;
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
            [settings.limitsModule]: { json: settings.sandbox },
          },
          globalOutbound: message.outbound ? exportsOf(this.ctx).Outbound({ props: { route } }) : null,
        });
      } catch (error) {
        // No supervise() to end it: its control goes here.
        closeControl(run);
        const fault = messageOf(error);
        await report(
          bridge,
          { t: 'done', run, outcome: 'fault', fault, logs: [], settledBeforeDeadline: true },
          settings,
        );
        return;
      }
      const loaded = worker;
      openRoute(route, run);
      const options = { run, bound: message.bound, retain: message.retain, live: message.live === true };
      const reply = await supervise(
        run,
        loaded,
        (entrypoint) => doneMessage(run, loaded, settings, () => entrypoint.evaluate(bridge.dup(), options)),
        disposeQuietly,
      );
      if (!message.retain || reply.t !== 'done' || reply.outcome !== 'value') {
        await report(bridge, reply, settings);
        return;
      }
      await this.#keep(run as string as ExecutionId, loaded, bridge, reply);
    } finally {
      closeRoute(route);
      clearInterval(keepAlive);
      disposeQuietly(worker);
    }
  }

  /** Serves a retained execution's invocations, one at a time, until it is released. */
  async #keep(exec: ExecutionId, worker: SandboxWorker, bridge: RunBridge, reply: SupervisorMessage): Promise<void> {
    const settings = this.env.SETTINGS;
    try {
      let next = nextRequest(exec);
      // The execution's own `done`, reported once this keeper waits.
      await report(bridge, reply, settings);
      for (;;) {
        const request = await next;
        if (request === null) return;
        next = nextRequest(exec);
        const run = request.run as RunId;
        openRoute(exec as string as RouteId, run);
        const invocation = await supervise(
          run,
          worker,
          (entrypoint) =>
            doneMessage(run, worker, settings, async () => {
              // Inside the call, so an argument the codec refuses is a fault of this run.
              const args = valueCodec.decode(request.args);
              const options = { run, bound: request.bound, live: request.live === true };
              return entrypoint.invoke(request.handle, Array.isArray(args) ? args : [], bridge.dup(), options);
            }),
          disposeQuietly,
        );
        await report(bridge, invocation, settings);
      }
    } finally {
      keepers.delete(exec);
    }
  }
}

function nextRequest(exec: ExecutionId): Promise<InvokeMessage | null> {
  return new Promise((next) => keepers.set(exec, next));
}

/** The supervisor's `ctx.exports`, which workers-types leaves untyped. */
function exportsOf(ctx: ExecutionContext): SupervisorExports {
  return (ctx as unknown as { exports: SupervisorExports }).exports;
}

function invoke(message: InvokeMessage): void {
  const exec = message.exec as ExecutionId;
  const run = message.run as RunId;
  const keeper = keepers.get(exec);
  if (keeper === undefined) {
    send({ t: 'done', run, outcome: 'missing', logs: [], settledBeforeDeadline: true });
    return;
  }
  keepers.delete(exec);
  bridges.get(exec)?.rename(run);
  openControl(run);
  keeper(message);
}

function release(exec: ExecutionId): void {
  const keeper = keepers.get(exec);
  keepers.delete(exec);
  keeper?.(null);
}

function receive(message: HostMessage, env: SupervisorEnv, ctx: ExecutionContext): void {
  switch (message.t) {
    case 'run': {
      const run = message.run as RunId;
      const exec = message.run as ExecutionId;
      // Made here, so a `cancel` that overtakes the Runner's start is not lost.
      openControl(run);
      const bridge = new Bridge(run, env.SETTINGS);
      bridges.set(exec, bridge);
      exportsOf(ctx)
        .Runner.execute(message, bridge)
        .catch((error: unknown) => {
          closeControl(run);
          // The Runner itself failed (workerd refused the call): the run still gets its `done`.
          send({ t: 'done', run, outcome: 'fault', fault: messageOf(error), logs: [], settledBeforeDeadline: true });
        })
        .finally(() => bridges.delete(exec));
      return;
    }
    case 'invoke':
      invoke(message);
      return;
    case 'cancel':
      cancelRun(message.run as RunId, message.raceMayWin);
      return;
    case 'release':
      release(message.exec as ExecutionId);
      return;
    case 'answer':
      answer(message.ask as AskId, message.envelope);
      return;
  }
}

export default {
  fetch(request, env, ctx) {
    const settings = env.SETTINGS;
    const authorized = request.headers.get(settings.tokenHeader) === settings.token;
    if (hostConnected() || !authorized || request.headers.get('upgrade') !== 'websocket') {
      return new Response(null, { status: 403 });
    }
    const pair = new WebSocketPair();
    const server = pair[1];
    server.accept();
    connectHost(server);
    server.addEventListener('message', (event) => {
      const message = typeof event.data === 'string' ? grammar.parseHostMessage(event.data) : null;
      if (message === null) {
        console.error(supervisorText.supervisorFailure + supervisorText.messageMalformed);
        return;
      }
      try {
        receive(message, env, ctx);
      } catch (error) {
        console.error(supervisorText.supervisorFailure + messageOf(error));
      }
    });
    server.addEventListener('close', disconnectHost);
    return new Response(null, { status: 101, webSocket: pair[0] });
  },
} satisfies ExportedHandler<SupervisorEnv>;
