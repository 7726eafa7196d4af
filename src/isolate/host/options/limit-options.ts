/**
 * The size caps of one execution (`limits.*`) of IsolateExecutor, as a schema: each an integer from
 * 1 to its maximum, in the order a refusal and --help list them. Every size is in bytes (UTF-8 for text).
 */
import { DEFAULT_MAX_CODE_BYTES } from '../../../protocol/code-size.js';
import { optionsSchema } from '../../../protocol/parse-options.js';
import { TOOL_CALL_STALL_MS } from '../../contract/tool-call-stall.js';
import { capOption } from './option-row.js';

const MIB = 2 ** 20;
/**
 * The largest result, tool argument, tool result and log text: each crosses workerd's RPC inside
 * the pool member, which refuses a value over 32 MiB; this leaves room for its framing.
 */
const MAX_RPC_PAYLOAD_BYTES = 30 * MIB;

export const LIMIT_SCHEMA = optionsSchema(
  {
    /** A request's code, checked before anything reads it (UTF-8). Default 15 MiB. */
    maxCodeBytes: capOption(
      'bytes',
      // The code goes into the start message, which maxRequestBytes bounds.
      MAX_RPC_PAYLOAD_BYTES,
      DEFAULT_MAX_CODE_BYTES,
      'max-code-bytes',
      "a request's code, checked before anything reads it",
      "a request's code (UTF-8), checked before anything reads it (at most 30 MiB)",
    ),
    /** What a request sends into the sandbox: its code and modules, or invokeHandle's arguments. Default 16 MiB. */
    maxRequestBytes: capOption(
      'bytes',
      MAX_RPC_PAYLOAD_BYTES,
      16 * MIB,
      'max-request-bytes',
      'code and modules, or `invokeHandle` arguments',
      "what one request sends into the sandbox: its code and modules, or `invokeHandle`'s arguments (at most 30 MiB)",
    ),
    /** The settled value, in its encoded form. Default 16 MiB. */
    maxResultBytes: capOption(
      'bytes',
      MAX_RPC_PAYLOAD_BYTES,
      16 * MIB,
      'max-result-bytes',
      'the result, encoded',
      "the settled value, in its encoded form (at most 30 MiB: it crosses workerd's RPC inside the member)",
    ),
    /** One tool call's arguments, as JSON. Default 16 MiB. */
    maxToolArgsBytes: capOption(
      'bytes',
      MAX_RPC_PAYLOAD_BYTES,
      16 * MIB,
      'max-tool-args-bytes',
      "one tool call's arguments",
      "one tool call's arguments, as JSON (at most 30 MiB: workerd's RPC carries them)",
    ),
    /** One tool call's result envelope, as JSON. Default 16 MiB. */
    maxToolResultBytes: capOption(
      'bytes',
      MAX_RPC_PAYLOAD_BYTES,
      16 * MIB,
      'max-tool-result-bytes',
      "one tool call's result",
      "one tool call's result envelope, as JSON (at most 30 MiB)",
    ),
    /** Tool calls one execution may have waiting on the host at once; one more fails at once. Default 256. */
    maxConcurrentToolCalls: capOption(
      'count',
      10_000,
      256,
      'max-concurrent-tool-calls',
      'tool calls one execution may have waiting on the host while they answer',
      `tool calls one execution may have waiting on the host at once while they answer; later calls wait in the sandbox until earlier ones answer, and when none has answered for ${TOOL_CALL_STALL_MS} ms the bound opens by as many again, so calls that wait on a later call never deadlock`,
    ),
    /** The arguments (JSON) of the tool calls one execution has waiting on the host, together. Default 32 MiB. */
    maxConcurrentToolArgsBytes: capOption(
      'bytes',
      1024 * MIB,
      32 * MIB,
      'max-concurrent-tool-args-bytes',
      'the arguments of those calls together',
      'the arguments (JSON) of the tool calls one execution has waiting on the host, together; later calls wait in the sandbox until earlier ones answer',
    ),
    /** Captured console lines; past this a marker line says the logs were cut. Default 10000. */
    maxLogLines: capOption(
      'count',
      10_000_000,
      10_000,
      'max-log-lines',
      'console lines kept',
      'captured console lines per run',
    ),
    /** Captured console text; past this a marker line says the logs were cut. Default 4 MiB. */
    maxLogBytes: capOption(
      'bytes',
      MAX_RPC_PAYLOAD_BYTES,
      4 * MIB,
      'max-log-bytes',
      'console text kept',
      'captured console text per run (UTF-8)',
    ),
    /** The body of one outbound request a sandbox `fetch` sends. Default 32 MiB. */
    maxRequestBodyBytes: capOption(
      'bytes',
      1024 * MIB,
      32 * MIB,
      'max-request-body-bytes',
      "one outbound fetch's request body",
      'the body of one outbound request a sandbox `fetch` sends',
    ),
    /** The body of one outbound response a sandbox `fetch` receives. Default 32 MiB. */
    maxResponseBodyBytes: capOption(
      'bytes',
      1024 * MIB,
      32 * MIB,
      'max-response-body-bytes',
      "one outbound fetch's response body",
      'the body of one outbound response a sandbox `fetch` receives',
    ),
    /** Sandbox fetches one run may have in flight at once; one more fails at once. Default 256. */
    maxConcurrentFetches: capOption(
      'count',
      // Each fetch in flight holds a descriptor of the member, whose confined limit is 1024.
      900,
      256,
      'max-concurrent-fetches',
      'fetches one run may have in flight at once',
      'sandbox fetches one run may have in flight at once (at most 900: each holds a descriptor of the member)',
    ),
    /**
     * What a run's process may write to its stdout and stderr: workerd's own lines (the console
     * methods not captured as logs are dropped in the sandbox); past it the run ends and the process
     * is killed. Default 1 MiB.
     */
    maxProcessOutputBytes: capOption(
      'bytes',
      1024 * MIB,
      MIB,
      'max-process-output-bytes',
      "what a run's process may write to its stdout and stderr",
      "what a run's process may write to its stdout and stderr: workerd's own lines (the console methods not captured as logs are dropped in the sandbox, as upstream leaves them out of its logs)",
    ),
  },
  { arrays: false },
);
