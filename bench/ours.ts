/**
 * One workload on our executors: through the native contract (any `Executor`: IsolateExecutor in
 * process, or RemoteExecutor to a daemon) and through the dialect (`CodemodeExecutor`). Tools are
 * materialized afresh per execution, as the reference worker does per request.
 */
import { materializeProviders } from '../harness/tools.js';
import type { CodemodeExecutor } from '../src/codemode/codemode-executor.js';
import { createEnvelopeDispatch, type ProviderHandler } from '../src/protocol/dispatch.js';
import { ToolNotFoundError } from '../src/protocol/errors.js';
import type { ExecuteRequest, Executor } from '../src/protocol/types.js';
import { checkOutcome, type Workload } from './workloads.js';

/** The native request: `{code}` alone when there are no tools, as a host would send it. */
export async function runNative(side: string, executor: Executor, workload: Workload): Promise<void> {
  const providers = materializeProviders(workload.providers);
  const request: ExecuteRequest = { code: workload.code };
  const guard = { active: true };
  if (providers.length > 0) {
    const handlers: Record<string, ProviderHandler> = {};
    for (const { name, fns } of providers) {
      handlers[name] = (tool, args) => {
        const fn = Object.hasOwn(fns, tool) ? fns[tool] : undefined;
        if (fn === undefined) throw new ToolNotFoundError(tool);
        return fn(...args);
      };
    }
    request.providers = providers.map(({ name, fns }) => ({ name, tools: Object.keys(fns) }));
    request.dispatch = createEnvelopeDispatch(handlers, guard);
  }
  try {
    checkOutcome(side, workload, await executor.execute(request));
  } finally {
    guard.active = false;
  }
}

/** Through the dialect of either tree `--against` compares: only `execute` is called. */
export async function runDialect(
  side: string,
  dialect: Pick<CodemodeExecutor, 'execute'>,
  workload: Workload,
): Promise<void> {
  checkOutcome(side, workload, await dialect.execute(workload.code, materializeProviders(workload.providers)));
}
