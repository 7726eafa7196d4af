/**
 * The largest frames that cross a member's socket and workerd's RPC inside it, from the size caps.
 */
import type { IsolateLimits } from './types.js';

const MIB = 2 ** 20;

/** workerd's limit on one value crossing its RPC. */
const WORKERD_RPC_LIMIT_BYTES = 32 * MIB;
/**
 * The largest outcome frame (`done`, `cancelled`) as it crosses workerd's RPC inside the member:
 * the run's context hands it to the socket's as one string, which V8 serializes at a byte a
 * UTF-16 unit when every unit is below 0x100, else at two. Room is left for the serialization's
 * own header. An outcome over it fails with a text naming it beside the frame cap.
 */
export const MAX_OUTCOME_RPC_BYTES = WORKERD_RPC_LIMIT_BYTES - 64 * 1024;

/** What one captured line adds to a frame beside its text: `{"level":"error","message":""},`. */
const LOG_LINE_FRAME_BYTES = 32;
/** Room in a frame for everything besides its payload: the ids, the names, the logs' marker line. */
const FRAME_SLACK_BYTES = 2 * MIB;

/**
 * The largest frame a supervisor sends the host (channel.ts), from the caps: the host's socket
 * reads no more, and the supervisor sends none larger (one it would is refused there, with a text
 * naming the caps). Each frame kind:
 * - `call`: the arguments' JSON text inside a JSON string, where each `"` and `\` doubles (JSON
 *   text holds nothing else JSON escapes), so twice `maxToolArgsBytes`;
 * - `done`: the value as JSON, as measured against `maxResultBytes` (a thrown value's text or a
 *   fault in its place), and the logs, whose text may escape to six bytes a byte (`\u0001`);
 * - `cancelled`: the logs alone.
 */
export function maxSupervisorFrameBytes(limits: IsolateLimits): number {
  const call = 2 * limits.maxToolArgsBytes;
  const logs = 6 * limits.maxLogBytes + LOG_LINE_FRAME_BYTES * (limits.maxLogLines + 1);
  return Math.max(call, limits.maxResultBytes + logs) + FRAME_SLACK_BYTES;
}
