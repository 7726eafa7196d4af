/**
 * Every text the remote client composes. The break texts and the closed text are contract
 * (docs/remote.md, "How a break is reported").
 */
import { describeValue } from '../protocol/describe-value.js';
import { formatDidYouMean } from '../protocol/texts.js';

/** A call of `execute` failed because its session broke. */
export const BROKEN_DURING_EXECUTION = 'Executor connection broke during execution';

/** A call of the handle surface (`invokeHandle`, `closeHandles`) failed because its session broke. */
export const BROKEN_DURING_CALL = 'Executor connection broke during a call';

/** Every call after `dispose()`. */
export const EXECUTOR_CLOSED = 'RemoteExecutor is closed';

export function formatOpenFailed(url: string): string {
  return `Failed to open WebSocket to ${url}`;
}

/** Node 20 has no global WebSocket, and capnweb builds its socket from the global one. */
export function formatNoGlobalWebSocket(url: string): string {
  return (
    `Failed to open WebSocket to ${url}: this runtime has no global WebSocket (Node 20 has none). ` +
    "Pass the ws package's: import { WebSocket } from 'ws', then connect(url, { websocket: WebSocket })."
  );
}

/** `token` and `headers` both travel as handshake headers, which the standard constructor cannot send. */
export function formatHeadersNeedWebSocket(passed: readonly ('token' | 'headers')[]): string {
  const subject = passed.map((name) => `options.${name}`).join(' and ');
  const token = passed.includes('token') ? ' (the token is sent as the authorization header)' : '';
  return (
    `${subject} ${passed.length > 1 ? 'need' : 'needs'} options.websocket: the standard WebSocket constructor cannot send headers${token}. ` +
    "Pass a constructor that accepts (url, { headers }), such as the ws package's WebSocket."
  );
}

export function formatHandshakeFailed(url: string, reason: string): string {
  const reasonEnds = /[.!?]$/.test(reason) ? '' : '.';
  return `Executor at ${url} refused the connection: ${reason}${reasonEnds} Is \`codemode-executor serve\` running there, on that port?`;
}

export function formatHandshakeTimeout(url: string, timeout: number): string {
  return `Executor at ${url} did not answer the version handshake within ${timeout} ms`;
}

export function formatHeartbeatTimeout(timeout: number): string {
  return `Executor did not answer a heartbeat within ${timeout} ms`;
}

export function formatConnectOptionInvalid(name: string, expected: string, value: unknown): string {
  return `connect(): ${name ? `options.${name}` : 'options'} must be ${expected}, got ${describeValue(value)}`;
}

/**
 * A token with a control character, which no HTTP header carries (ws would throw `Invalid character
 * in header content`, naming only the header). Most often the newline a file ends with. The token
 * is a secret, so only the character and its place are named.
 */
export function formatTokenControlCharacter(code: number, position: number, length: number): string {
  const character =
    code === 0x0a
      ? 'a line break (\\n)'
      : code === 0x0d
        ? 'a carriage return (\\r)'
        : `a control character (U+${code.toString(16).toUpperCase().padStart(4, '0')})`;
  return (
    `connect(): options.token holds ${character} at character ${position} of ${length}, which no HTTP header can carry. ` +
    "A token read from a file keeps the file's last newline: trim it (token.trim())."
  );
}

export function formatConnectOptionUnknown(name: string, known: readonly string[], nearest?: string): string {
  return `connect() has no option ${name}${formatDidYouMean(nearest)}; the options are ${known.join(', ')}`;
}

export function formatTokenMissing(url: string): string {
  return `Executor at ${url} requires a bearer token, and this connection sent none: pass options.token (the daemon's --token or CODEMODE_EXECUTOR_TOKEN), or an authorization header`;
}

export function formatTokenWrong(url: string): string {
  return `Executor at ${url} refused the bearer token: it is not the token the daemon was started with (--token or CODEMODE_EXECUTOR_TOKEN)`;
}

export function formatNotTakingSessions(url: string): string {
  return `Executor at ${url} is not taking new sessions (HTTP 503): it is shutting down, at its --max-connections limit, or short of file descriptors (its log says which); another daemon behind the same address may take the session`;
}

export function formatInvalidUrl(url: unknown): string {
  return `connect(): url must be a ws:// or wss:// URL, got ${describeValue(url)}`;
}

export function formatInvalidOutbound(value: unknown): string {
  return `outbound must be a function, null or undefined, got ${describeValue(value)}`;
}

/** Worded as capnweb's WebSocket transport words it, so both client paths read alike. */
export const UNEXPECTED_MESSAGE_TYPE = 'Received unexpected message type from WebSocket.';

/** A call failed with an error that carries no executor error code (capnweb's own, say). */
export function formatCallNotCarried(reason: string): string {
  return `The executor connection could not carry the call: ${reason}`;
}

/** The request could not be made into its wire form (not an object, a value the codec refuses). */
export function formatRequestUnusable(reason: string): string {
  return `The request cannot be sent to the executor: ${reason}`;
}
