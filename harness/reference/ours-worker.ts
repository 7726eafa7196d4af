/**
 * The `ours-worker` column: a Worker host that keeps upstream's runtime on Cloudflare and moves
 * only execution. Upstream's runtime (the newest release) lives in a Durable Object under
 * `wrangler dev`, and its executor is `new CodemodeExecutor(await connect(daemonUrl))`, our
 * root entry bundled into the Worker, talking to a daemon the harness started.
 */
import { CodemodeConnector, CodemodeRuntime, createCodemodeRuntime, truncateResult } from '@cloudflare/codemode';
import { CodemodeExecutor, connect } from '../../src/index.js';
import { type RuntimeApi, withModules } from '../flow-host.js';
import { texts } from '../texts.js';
import { type FlowEnv, flowHostClass, routeFlow } from './flow-host-object.js';

export { CodemodeRuntime };

export const FlowHost = flowHostClass(
  { createCodemodeRuntime, CodemodeConnector, truncateResult } as unknown as RuntimeApi,
  async (_env, daemon, modules) => {
    if (daemon === undefined) throw new Error(texts.flow.noDaemon);
    return withModules(new CodemodeExecutor(await connect(daemon)), modules);
  },
);

export default {
  fetch(request: Request, env: FlowEnv): Promise<Response> {
    return routeFlow(request, env, async () => new Response(texts.cell.flowsOnly, { status: 404 }));
  },
};
