/**
 * The remote client: `connect(url, options)` and `RemoteExecutor`. Free of runtime-specific APIs,
 * so the package's root entry re-exports it and a Worker bundles it without nodejs_compat.
 */
export { connect, RemoteExecutor } from './remote-executor.js';
export { CONNECT_DEFAULTS } from './connect-options.js';
export type { ConnectOptions } from './connect-options.js';
export type { WebSocketConstructor, WebSocketLike } from './websocket-types.js';
export { BROKEN_DURING_CALL, BROKEN_DURING_EXECUTION, EXECUTOR_CLOSED } from './texts.js';
