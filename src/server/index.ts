/**
 * `@supolka/cloudflare-codemode-executor/server`: the executor daemon as a library. Node only.
 * `createExecutorServer` serves any native `Executor` over capnweb on a ws server, with an optional
 * admin listener (health, readiness, Prometheus metrics); `runDaemon` adds the process around it
 * (the log lines, the drain on SIGTERM or when its parent goes away). The bin
 * `codemode-executor serve` is `runDaemon` over an `IsolateExecutor`. See docs/remote.md and
 * docs/fleet.md.
 */

export type { DaemonIo, DaemonOptions } from './command/run-daemon.js';
export { runDaemon } from './command/run-daemon.js';
export type { ExecutorServer, ExecutorServerOptions } from './executor-server.js';
export { createExecutorServer, SERVER_DEFAULTS } from './executor-server.js';
export type { LogFormat, LogSink } from './observe/log.js';
export type { DaemonMetrics } from './observe/metrics.js';
export { TOKEN_ENV } from './options/server-options.js';
