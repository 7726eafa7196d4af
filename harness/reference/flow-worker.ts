/**
 * The entry of the reference columns from 0.4.0 on: the case worker (worker.ts) plus upstream's
 * runtime in a Durable Object for flows, over the release's `DynamicWorkerExecutor`. The runtime
 * needs `CodemodeRuntime` exported from the entry, a SQLite-backed class for the host object and
 * a `worker_loaders` binding (the column's wrangler configuration).
 */
import {
  CodemodeConnector,
  CodemodeRuntime,
  createCodemodeRuntime,
  DynamicWorkerExecutor,
  truncateResult,
} from '@cloudflare/codemode';
import type { RuntimeApi } from '../flow-host.js';
import { type FlowEnv, flowHostClass, routeFlow } from './flow-host-object.js';
import caseWorker, { Responder } from './worker.js';

export { CodemodeRuntime, Responder };

export const FlowHost = flowHostClass(
  { createCodemodeRuntime, CodemodeConnector, truncateResult } as unknown as RuntimeApi,
  // A flow's packages go where an upstream host puts its modules: the executor's constructor.
  async (env, _daemon, modules) =>
    new DynamicWorkerExecutor({
      loader: env.LOADER as never,
      ...(modules === undefined ? {} : { modules: modules as unknown as Record<string, string> }),
    }),
);

export default {
  fetch(request: Request, env: FlowEnv, ctx: never): Promise<Response> {
    return routeFlow(request, env, () => caseWorker.fetch(request, env as never, ctx));
  },
};
