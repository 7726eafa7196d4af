/**
 * The remote client: `connect(url, options)` and `RemoteExecutor`. Free of runtime-specific APIs,
 * so the package's root entry re-exports it and a Worker bundles it without nodejs_compat.
 */

export type { ConnectOptions } from './connect-options.js';
export { connect, RemoteExecutor } from './remote-executor.js';
export type { WebSocketConstructor, WebSocketLike } from './websocket-types.js';
