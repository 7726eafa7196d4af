/**
 * The host side of a tool call: the argument grammar, the `{result}` / `{error}` envelope, and
 * the completion guard that refuses calls once the execution that made them has settled.
 */
import { binaryCodec } from './codec.js';
import { ToolNotFoundError } from './errors.js';
import { messageOf } from './message-of.js';
import { COMPLETED_MESSAGE, UNPRINTABLE_THROW_MESSAGE } from './texts.js';
import type { Dispatch } from './types.js';

/** One mutable flag per execution: the caller builds `{active: true}` and flips it in its `finally`. */
export interface CompletionGuard {
  active: boolean;
}

/** Calls one tool of one provider with the parsed arguments. Throws `ToolNotFoundError` for an unknown tool. */
export type ProviderHandler = ((tool: string, args: unknown[]) => unknown) & {
  /**
   * Whether the provider has `tool`, asked before the arguments are read: a tool it lacks is not
   * found whatever its arguments (a program that replaced `JSON.stringify` sends none that parse),
   * as upstream looks a tool up first. Absent, every tool is tried (a connector's are not known).
   */
  readonly has?: (tool: string) => boolean;
};

/**
 * The dispatch grammar: the argument JSON (binary codec) parses to an array, which is spread; any
 * other value becomes a one-element array; an empty or missing string is no arguments.
 */
export function parseDispatchArguments(argsJson: string | null | undefined): unknown[] {
  if (!argsJson) return [];
  const parsed = binaryCodec.parse(argsJson);
  return Array.isArray(parsed) ? parsed : [parsed];
}

/** Encodes a settled value as the result envelope. `undefined` encodes as `{}`. */
export function encodeResultEnvelope(value: unknown): string {
  return binaryCodec.stringify({ result: value });
}

export function encodeErrorEnvelope(message: string): string {
  return JSON.stringify({ error: message });
}

/**
 * Wraps per-provider handlers into a `Dispatch`. Every failure, including a provider with no
 * handler (`Tool "<tool>" not found`) and a result the codec cannot encode, becomes an error
 * envelope; the returned promise never rejects.
 */
export function createEnvelopeDispatch(
  handlers: Readonly<Record<string, ProviderHandler>>,
  guard: CompletionGuard,
): Dispatch {
  return async (provider, tool, argsJson) => {
    if (!guard.active) return encodeErrorEnvelope(COMPLETED_MESSAGE);
    try {
      const handler = Object.hasOwn(handlers, provider) ? handlers[provider] : undefined;
      if (!handler || handler.has?.(tool) === false) throw new ToolNotFoundError(tool);
      const value = await handler(tool, parseDispatchArguments(argsJson));
      if (!guard.active) return encodeErrorEnvelope(COMPLETED_MESSAGE);
      return encodeResultEnvelope(value);
    } catch (error) {
      if (!guard.active) return encodeErrorEnvelope(COMPLETED_MESSAGE);
      return encodeErrorEnvelope(messageOfThrown(error));
    }
  };
}

/**
 * A dispatch held to a guard: once the guard is off, a call gets the completion envelope without
 * reaching `dispatch`. For a dispatch built elsewhere (a daemon holds its client's stub).
 */
export function guardDispatch(dispatch: Dispatch, guard: CompletionGuard): Dispatch {
  return (provider, tool, argsJson) =>
    guard.active ? dispatch(provider, tool, argsJson) : Promise.resolve(encodeErrorEnvelope(COMPLETED_MESSAGE));
}

/**
 * `messageOf`, kept from rejecting: a thrown value with no text form (`Object.create(null)`, a
 * throwing `message` getter) reports the failure its conversion raised, so the envelope promise
 * still settles.
 */
function messageOfThrown(error: unknown): string {
  try {
    return messageOf(error);
  } catch (conversionFailure) {
    try {
      return messageOf(conversionFailure);
    } catch {
      return UNPRINTABLE_THROW_MESSAGE;
    }
  }
}
