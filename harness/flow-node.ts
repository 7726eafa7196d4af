/**
 * Runtime flows on our Node columns: upstream's own runtime (`createCodemodeRuntime`, the newest
 * installed release) over `openDurableState` and a `CodemodeExecutor`, the composition a Node
 * host ships. Each flow gets a fresh state directory; a restart closes the state and opens the
 * same path again, so only what is durable survives it. Node-only.
 */
import '../src/register/index.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CodemodeExecutor } from '../src/index.js';
import { type RuntimeApi, runHostStep, withModules } from './flow-host.js';
import type { Flow } from './flow-model.js';
import type { FlowSession } from './flows.js';

/** How upstream's runtime opens each line it logs for the host (a tool that threw, a transform that threw). */
const UPSTREAM_LOG_PREFIX = 'codemode: ';

/**
 * Upstream's runtime logs a flow's expected failures to the host's console; on the reference
 * columns those lines go to wrangler's log, and here they would break into the progress output.
 * Flows judge what the runtime returns, never its log, so its lines are dropped, and nothing else.
 */
function dropUpstreamRuntimeLog(): void {
  for (const level of ['warn', 'error'] as const) {
    const write = console[level];
    console[level] = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && args[0].startsWith(UPSTREAM_LOG_PREFIX)) return;
      write(...args);
    };
  }
}

/** Opens flow sessions whose runtime runs on `executor()`. */
export function nodeFlowSessions(executor: () => Promise<CodemodeExecutor>): (flow: Flow) => Promise<FlowSession> {
  let quieted = false;
  return async (flow) => {
    if (!quieted) {
      quieted = true;
      dropUpstreamRuntimeLog();
    }
    // Loaded here, after the register entry, which answers upstream's `cloudflare:workers` import.
    const [upstream, { openDurableState }] = await Promise.all([
      import('@cloudflare/codemode'),
      import('../src/durable/index.js'),
    ]);
    const api = upstream as unknown as RuntimeApi;
    const exports = { CodemodeRuntime: upstream.CodemodeRuntime };
    const path = await mkdtemp(join(tmpdir(), `flow-${flow.id}-`));
    // Neither the state's lock holder nor the pool's processes keep Node's event loop alive: a
    // command whose only work is this flow would exit mid-step (status 13) without this timer.
    const alive = setInterval(() => {}, 60_000);
    let state = await openDurableState({ path, exports });
    return {
      step: async (request) => runHostStep(api, state, withModules(await executor(), request.modules), request),
      async restart() {
        await state.close();
        state = await openDurableState({ path, exports });
      },
      async close() {
        try {
          await state.close();
        } finally {
          clearInterval(alive);
          await rm(path, { recursive: true, force: true });
        }
      },
    };
  };
}
