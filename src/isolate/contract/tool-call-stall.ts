/**
 * How long the tool calls an execution has waiting on the host may all go unanswered, while later
 * calls are held in the sandbox, before `limits.maxConcurrentToolCalls` opens by as many again
 * (workerd/tool-calls.ts). Read by the sandbox and by the option's text.
 */
export const TOOL_CALL_STALL_MS = 250;
