/**
 * Our run events as TanStack AI code mode's UI event stream (`@tanstack/ai-code-mode`): a TanStack
 * app that shows its own code runs (`code_mode:execution_started`, `code_mode:console`,
 * `code_mode:external_call`, `code_mode:external_result`, `code_mode:external_error`) shows ours
 * with no glue of its own. Runtime-neutral; nothing of TanStack is imported.
 *
 * What TanStack's events carry and ours do not is left out rather than made up: a tool call's
 * arguments and result are values, which our events never carry (their sizes are there instead).
 */
import type { OnRunEvent, RunEvent } from '../protocol/types.js';

/** TanStack's `emitCustomEvent(eventName, value)`, from a tool's execution context. */
export type TanStackEmit = (eventName: string, value: Record<string, unknown>) => void;

/** The event names TanStack's code mode streams, in its own spelling. */
export const TANSTACK_CODE_MODE_EVENTS = {
  started: 'code_mode:execution_started',
  console: 'code_mode:console',
  call: 'code_mode:external_call',
  result: 'code_mode:external_result',
  error: 'code_mode:external_error',
} as const;

/**
 * Starts TanStack's stream for one run of `code`: emits `code_mode:execution_started` now and
 * returns the `onEvent` to pass to `execute`, which emits the rest. A tool is named
 * `provider.tool`, as the program calls it. Our `fetch` and `end` have no TanStack counterpart and
 * are not emitted; `end` still ends the run's stream, as TanStack's own tool result does.
 */
export function tanStackCodeModeEvents(emit: TanStackEmit, code: string): OnRunEvent {
  emit(TANSTACK_CODE_MODE_EVENTS.started, { timestamp: Date.now(), codeLength: code.length });
  const functions = new Map<number, string>();
  return (event: RunEvent) => {
    switch (event.type) {
      case 'console':
        emit(TANSTACK_CODE_MODE_EVENTS.console, { level: event.level, message: event.text, timestamp: Date.now() });
        return;
      case 'tool-call': {
        const name = `${event.provider}.${event.tool}`;
        functions.set(event.callId, name);
        emit(TANSTACK_CODE_MODE_EVENTS.call, { function: name, argsBytes: event.argsBytes, timestamp: Date.now() });
        return;
      }
      case 'tool-result': {
        const name = functions.get(event.callId) ?? '';
        functions.delete(event.callId);
        if (event.error !== undefined)
          emit(TANSTACK_CODE_MODE_EVENTS.error, { function: name, error: event.error, duration: event.durationMs });
        else
          emit(TANSTACK_CODE_MODE_EVENTS.result, {
            function: name,
            resultBytes: event.resultBytes,
            duration: event.durationMs,
          });
        return;
      }
      default:
        return;
    }
  };
}
