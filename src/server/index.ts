/**
 * `@supolka/cloudflare-codemode-executor/server`: the executor daemon as a library. Node only.
 * `createExecutorServer` serves any native `Executor` over capnweb on a ws server, with an optional
 * admin listener (health, readiness, Prometheus metrics); `runDaemon` adds the process around it
 * (the log lines, the drain on SIGTERM or when its parent goes away). The bin
 * `codemode-executor serve` is `runDaemon` over an `IsolateExecutor`. See docs/remote.md and
 * docs/fleet.md.
 */

export type { ExecutorServer, ExecutorServerOptions } from './executor-server.js';
export { createExecutorServer, SERVER_DEFAULTS } from './executor-server.js';
export type { LogFormat, LogSink } from './log.js';
export type { DaemonMetrics } from './metrics.js';
export { TOKEN_ENV } from './options/server-options.js';
export type { DaemonIo, DaemonOptions } from './run-daemon.js';
export { runDaemon } from './run-daemon.js';
