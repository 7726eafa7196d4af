/**
 * The places a case runs, behind one interface: ours in-process
 * (`new CodemodeExecutor(new IsolateExecutor(...))`, the composition a host ships), ours over a
 * daemon (`new CodemodeExecutor(await connect(url))` to a `codemode-executor serve` this side
 * starts), and a reference column (the real DynamicWorkerExecutor of one release under
 * `wrangler dev`). Each side is loaded when asked for, so a run on one never loads another's.
 *
 * `countHostWaits: false` exists on our native executor only: the adapter always asks for the wall
 * clock, so such a case runs through a second CodemodeExecutor over a wrapper that flips that one
 * request field, sharing the same native executor.
 */

import { BARE_RECORD_DEPRECATION } from '../src/codemode/texts.js';
import type { CodemodeExecutor, ConnectorBinding, Executor, ExtendedExecuteOptions } from '../src/index.js';
import { WORKERD_BINARY_ENV } from '../src/isolate/host/member/workerd-binary.js';
import type { Case, Outcome } from './case-model.js';
import { type ColumnId, resolvedWorkerd, WORKERD_NEWEST } from './columns.js';
import { MAX_CASES_TOGETHER, MAX_WAITING_CASES } from './lanes.js';
import type { Side } from './side-model.js';
import { texts } from './texts.js';
import {
  type CallRecord,
  materializeConnectors,
  materializeOutbound,
  materializeProviders,
  normalizeResult,
  normalizeThrow,
  settledCalls,
} from './tools.js';

/** Sandbox processes on our sides: the cases holding the column's lane, and the long ones waiting beside them. */
const OUR_POOL = MAX_CASES_TOGETHER + MAX_WAITING_CASES;

export async function startSide(name: ColumnId): Promise<Side> {
  if (name === 'ours') return startOursSide();
  if (name === 'ours-remote') return startRemoteSide(name);
  if (name === WORKERD_NEWEST) {
    const workerd = resolvedWorkerd();
    if (!workerd) throw new Error(texts.releases.notResolved(name));
    return startRemoteSide(name, { [WORKERD_BINARY_ENV]: workerd.binary });
  }
  if (name === 'ours-worker') return (await import('./reference/flow-sides.js')).startWorkerHostSide();
  const [{ startReferenceColumn }, { describeRequest }] = await Promise.all([
    import('./reference/wrangler.js'),
    import('./reference/request.js'),
  ]);
  const column = await startReferenceColumn(name);
  return {
    name,
    run: (item) => column.run(describeRequest(item)),
    ...(column.openFlow ? { openFlow: column.openFlow } : {}),
    output: () => column.output(),
    dispose: () => column.stop(),
  };
}

/** The dialect call a case describes: code, providers (or the bare record) and options. */
function describeOurCall(item: Case, record: CallRecord) {
  const providers = materializeProviders(item.providers, record);
  // loaderCpuMs is the reference loader's alone: ours takes no Worker Loader from its host.
  const { connectors, modules, timeout, outbound, bareRecord } = item.options ?? {};
  const options: ExtendedExecuteOptions = {};
  if (connectors !== undefined)
    options.connectors = materializeConnectors(connectors, record).map(
      (connector): ConnectorBinding => ({ name: connector.name, binding: { callTool: connector.callTool } }),
    );
  if (modules !== undefined) options.modules = modules;
  if (timeout !== undefined) options.timeout = timeout;
  const fetcher = materializeOutbound(outbound);
  if (fetcher !== undefined) options.outbound = fetcher;
  return { providersOrFns: bareRecord ? (providers[0]?.fns ?? {}) : providers, options };
}

/**
 * A case that passes a bare record asks for the dialect's deprecation line; printed, it would
 * break into the progress output. The dialect writes it synchronously, as `execute` begins.
 */
function withoutDeprecationLine<T>(call: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (args.length !== 1 || args[0] !== BARE_RECORD_DEPRECATION) warn(...args);
  };
  try {
    return call();
  } finally {
    console.warn = warn;
  }
}

/** The two dialect executors over one native executor: the wall clock, and the native clock. */
async function dialectOver(native: Executor): Promise<(item: Case) => Promise<Outcome>> {
  const { CodemodeExecutor } = await import('../src/index.js');
  const wallClock: CodemodeExecutor = new CodemodeExecutor(native);
  const nativeClock: CodemodeExecutor = new CodemodeExecutor({
    execute: (request) => native.execute({ ...request, countHostWaits: false }),
    invokeHandle: (request) => native.invokeHandle(request),
    closeHandles: (executionId) => native.closeHandles(executionId),
    dispose: async () => {}, // The native executor is disposed once, by its owner.
  });
  return async (item) => {
    const executor = item.options?.countHostWaits === false ? nativeClock : wallClock;
    const record: CallRecord = [];
    const { providersOrFns, options } = describeOurCall(item, record);
    let outcome: Outcome;
    try {
      const execution = item.options?.bareRecord
        ? withoutDeprecationLine(() => executor.execute(item.code, providersOrFns, options))
        : executor.execute(item.code, providersOrFns, options);
      outcome = normalizeResult(await execution);
    } catch (error) {
      outcome = normalizeThrow(error);
    }
    if (item.options?.recordCalls) outcome.calls = await settledCalls(record);
    return outcome;
  };
}

/**
 * The executor runtime flows run on, made when the first flow asks: default pool sizes, because a
 * snippet's nested run needs a second process while the outer run waits in its tool call.
 */
function lazily<T>(make: () => Promise<T>): { get(): Promise<T>; made(): Promise<T> | undefined } {
  let made: Promise<T> | undefined;
  return { get: () => (made ??= make()), made: () => made };
}

async function startOursSide(): Promise<Side> {
  const [{ IsolateExecutor }, { CodemodeExecutor }, { nodeFlowSessions }] = await Promise.all([
    import('../src/isolate/index.js'),
    import('../src/index.js'),
    import('./flow-node.js'),
  ]);
  const native = new IsolateExecutor({ pool: { maxWorkers: OUR_POOL } });
  const run = await dialectOver(native);
  const flowExecutor = lazily(async () => new CodemodeExecutor(new IsolateExecutor()));
  return {
    name: 'ours',
    run,
    openFlow: nodeFlowSessions(flowExecutor.get),
    async dispose() {
      try {
        await (await flowExecutor.made()?.catch(() => undefined))?.dispose();
      } finally {
        await native.dispose();
      }
    },
  };
}

/**
 * Ours over a daemon; `env` is added to the daemon's environment, where `CODEMODE_WORKERD_BINARY`
 * gives `ours-workerd-newest` its workerd (a process-wide choice, hence a daemon of its own).
 */
async function startRemoteSide(
  name: 'ours-remote' | typeof WORKERD_NEWEST,
  env: Record<string, string> = {},
): Promise<Side> {
  const [{ connect, CodemodeExecutor }, { WebSocket }, { startDaemonProcess }, { nodeFlowSessions }] =
    await Promise.all([import('../src/index.js'), import('ws'), import('./processes.js'), import('./flow-node.js')]);
  const daemon = await startDaemonProcess({ label: name, args: ['--max-workers', String(OUR_POOL)], env });
  let native: Executor;
  try {
    // Node 20 has no global WebSocket; the ws package's constructor also takes `{ headers }`.
    native = await connect(daemon.url, { websocket: WebSocket });
  } catch (error) {
    await daemon.stop();
    throw error;
  }
  const run = await dialectOver(native);
  // Flows get a daemon of their own, with the default pool (see `lazily`).
  const flowDaemon = lazily(() => startDaemonProcess({ label: `${name} flows`, args: [], env }));
  const flowExecutor = lazily(
    async () => new CodemodeExecutor(await connect((await flowDaemon.get()).url, { websocket: WebSocket })),
  );
  return {
    name,
    async run(item) {
      // A dead daemon is harness breakage, not every later case's result.
      const gone = daemon.gone();
      if (gone !== undefined) throw new Error(gone);
      return run(item);
    },
    openFlow: nodeFlowSessions(flowExecutor.get),
    output: () => daemon.output(),
    async dispose() {
      try {
        await (await flowExecutor.made()?.catch(() => undefined))?.dispose();
        await native.dispose();
      } finally {
        await Promise.all([daemon.stop(), flowDaemon.made()?.then((flows) => flows.stop())]);
      }
    },
  };
}
