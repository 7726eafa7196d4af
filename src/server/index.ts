/**
 * `@supolka/cloudflare-codemode-executor/server`: the executor daemon as a library. Node only.
 * `createExecutorServer` serves any native `Executor` over capnweb on a ws server; `runDaemon` adds
 * the process around it (the listening line, logs, graceful stop on SIGTERM). The bin
 * `codemode-executor serve` is `runDaemon` over an `IsolateExecutor`. See docs/remote.md.
 */

export { TOKEN_ENV } from './cli-args.js';
export type { ExecutorServer, ExecutorServerOptions } from './executor-server.js';
export { createExecutorServer, SERVER_DEFAULTS } from './executor-server.js';
export type { DaemonIo } from './run-daemon.js';
export { runDaemon } from './run-daemon.js';
