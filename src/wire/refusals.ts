/**
 * How the daemon refuses, in terms both ends know: the HTTP status of a refused WebSocket upgrade
 * (the client turns each into a text of its own) and the header a client sends so a load balancer
 * can keep it on one daemon. The text of an execution refused while the daemon drains is in
 * texts.ts: the client knows it by that text, opens a session elsewhere and sends the call there.
 */

export const UPGRADE_REFUSAL_STATUS = {
  /** The daemon has a token and the upgrade carried no bearer token. */
  tokenMissing: 401,
  /** The upgrade carried a bearer token that is not the daemon's. */
  tokenWrong: 403,
  /** The daemon drains or is at its connection limit: another daemon may take the session. */
  notTakingSessions: 503,
} as const;

/** Sent by `connect()` on every session it opens; the same value for the life of one executor. */
export const AFFINITY_HEADER = 'x-codemode-executor-affinity';
