/**
 * Our side: `new CodemodeExecutor(new IsolateExecutor({...}))`, the composition a real codemode
 * host ships. One IsolateExecutor serves the whole run and is disposed at the end.
 *
 * `countHostWaits: false` is ours-native only: the adapter always asks for the wall clock, so such
 * a case runs through a second CodemodeExecutor over a thin native wrapper that flips that one
 * request field, sharing the same pool. Everything else about the run is the shipped composition.
 */

import {
  CodemodeExecutor,
  type ConnectorBinding,
  type Executor,
  type ExtendedExecuteOptions,
} from '../../src/index.js';
import { IsolateExecutor } from '../../src/isolate/index.js';
import type { Case, Outcome } from '../case-model.js';
import { normalizeResult, normalizeThrow } from '../normalize-result.js';
import { materializeConnectors, materializeOutbound, materializeProviders } from '../tools.js';
import type { Side } from './side.js';

/** The native request field a case may override; the adapter sets it on every request. */
export function withHostWaitsUncounted(native: Executor): Executor {
  return {
    execute: (request) => native.execute({ ...request, countHostWaits: false }),
    invokeHandle: (request) => native.invokeHandle(request),
    closeHandles: (executionId) => native.closeHandles(executionId),
    // The shared pool is disposed once, through the plain composition.
    dispose: async () => {},
  };
}

/** The dialect call a case describes: code, providers (or the bare record) and options. */
export function describeOurCall(item: Case): {
  providersOrFns: Parameters<CodemodeExecutor['execute']>[1];
  options: ExtendedExecuteOptions;
} {
  const providers = materializeProviders(item.providers);
  const caseOptions = item.options ?? {};
  const options: ExtendedExecuteOptions = {};
  if (caseOptions.connectors !== undefined) {
    options.connectors = materializeConnectors(caseOptions.connectors).map(
      (connector): ConnectorBinding => ({ name: connector.name, binding: { callTool: connector.callTool } }),
    );
  }
  if (caseOptions.modules !== undefined) options.modules = caseOptions.modules;
  if (caseOptions.timeout !== undefined) options.timeout = caseOptions.timeout;
  const outbound = materializeOutbound(caseOptions.outbound);
  if (outbound !== undefined) options.outbound = outbound;
  const providersOrFns = caseOptions.bareRecord ? (providers[0]?.fns ?? {}) : providers;
  return { providersOrFns, options };
}

/**
 * One case through the dialect, as a host would call it: the wall-clock composition, or the
 * uncounted one for a case that asks for `countHostWaits: false`. A rejection is an outcome too.
 */
export async function runDialectCase(
  item: Case,
  dialect: CodemodeExecutor,
  uncounted: CodemodeExecutor,
): Promise<Outcome> {
  const executor = item.options?.countHostWaits === false ? uncounted : dialect;
  const { providersOrFns, options } = describeOurCall(item);
  try {
    return normalizeResult(await executor.execute(item.code, providersOrFns, options));
  } catch (error) {
    return normalizeThrow(error);
  }
}

export interface OursSideOptions {
  /** Pool size. Default 1: the catalogue runs one case at a time on a shared machine. */
  maxWorkers?: number;
}

export function createOursSide(settings: OursSideOptions = {}): Side {
  let native: IsolateExecutor | undefined;
  let dialect: CodemodeExecutor | undefined;
  let uncounted: CodemodeExecutor | undefined;

  const executors = () => {
    native ??= new IsolateExecutor({ pool: { maxWorkers: settings.maxWorkers ?? 1 } });
    dialect ??= new CodemodeExecutor(native);
    uncounted ??= new CodemodeExecutor(withHostWaitsUncounted(native));
    return { dialect, uncounted };
  };

  return {
    name: 'ours',
    async run(item) {
      const { dialect: plain, uncounted: nativeClock } = executors();
      return runDialectCase(item, plain, nativeClock);
    },
    async dispose() {
      const owned = native;
      native = undefined;
      dialect = undefined;
      uncounted = undefined;
      await owned?.dispose();
    },
  };
}
