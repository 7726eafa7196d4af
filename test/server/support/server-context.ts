/**
 * A daemon's per-connection context over an executor that does nothing, for tests that drive one
 * `Connection` directly: every line the daemon would log lands in `lines`.
 */
import { Tenancy } from '../../../src/isolate/host/pool/tenancy.js';
import type { Executor } from '../../../src/protocol/index.js';
import type { ServerContext } from '../../../src/server/calls/connection.js';
import { HeldRequests } from '../../../src/server/calls/held-requests.js';
import { ModuleCache } from '../../../src/server/modules/module-cache.js';
import { DaemonMetrics } from '../../../src/server/observe/metrics.js';
import { Readiness } from '../../../src/server/observe/readiness.js';
import { RefusalLog } from '../../../src/server/observe/refusal-log.js';
import { SERVER_DEFAULTS } from '../../../src/server/options/server-options.js';
import { RetainedLeases } from '../../../src/server/retained/retained-leases.js';

const idle: Executor = {
  execute: async () => ({ logs: [] }),
  invokeHandle: async () => ({ logs: [] }),
  closeHandles: async () => {},
  dispose: async () => {},
};

export function idleServerContext(lines: string[]): ServerContext {
  const log = (message: string) => void lines.push(message);
  return {
    executor: idle,
    protocolVersion: 1,
    maxExecutionsPerConnection: 4,
    heldRequests: new HeldRequests(SERVER_DEFAULTS, () => {}),
    tenancy: new Tenancy(0.5),
    retained: new RetainedLeases({
      maxRetainedPerConnection: 16,
      maxRetainedPerTenant: 64,
      idle: { timeoutMs: 60_000, close: () => {} },
    }),
    retainedIdle: { timeoutMs: 60_000, option: '--retained-idle-timeout-ms' },
    modules: new ModuleCache(SERVER_DEFAULTS.maxModuleCacheBytes),
    draining: false,
    daemonId: 'test',
    metrics: new DaemonMetrics(idle),
    readiness: new Readiness(idle),
    log,
    refusals: new RefusalLog(log, 'call'),
    track: () => () => {},
  };
}
