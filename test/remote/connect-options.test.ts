/**
 * connect()'s option refusals that say more than a row's rule, pinned as they read before the
 * options became a schema: the not-object refusal, maxReconnectAttempts' two rules, the outbound
 * text, and the order (an unknown option before a wrong value); and the timeout rule, a request's
 * own (src/protocol/request-schema.ts), which it took when the rule became one.
 */
import { describe, expect, it } from 'vitest';
import { resolveConnectOptions } from '../../src/remote/connect-options.js';

function refusal(options: unknown): { code: unknown; message: string } {
  try {
    resolveConnectOptions(options as never);
  } catch (error) {
    return { code: (error as { code?: unknown }).code, message: (error as Error).message };
  }
  throw new Error(`connect(${JSON.stringify(options)}) was taken; a refusal was expected`);
}

describe('connect() options', () => {
  it.each([
    [null, 'connect(): options must be an object, got null'],
    [{ maxReconnectAttempts: 0 }, 'connect(): options.maxReconnectAttempts must be a finite number > 0, got 0'],
    [{ maxReconnectAttempts: '3' }, 'connect(): options.maxReconnectAttempts must be a finite number > 0, got "3"'],
    [{ maxReconnectAttempts: 1.5 }, 'connect(): options.maxReconnectAttempts must be a positive integer, got 1.5'],
    [{ rotateAfterExecutions: 0 }, 'connect(): options.rotateAfterExecutions must be a positive integer, got 0'],
    [{ timeout: -1 }, 'connect(): options.timeout must be a number of milliseconds >= 0, null, or undefined, got -1'],
    [{ timeout: '5' }, 'connect(): options.timeout must be a number of milliseconds >= 0, null, or undefined, got "5"'],
    // Every request with it was refused by the daemon, so it is refused here.
    [
      { timeout: Number.POSITIVE_INFINITY },
      'connect(): options.timeout must be a number of milliseconds >= 0, null, or undefined, got Infinity',
    ],
    [{ outbound: 'https://x' }, 'outbound must be a function, null or undefined, got "https://x"'],
    [
      { token: '' },
      'connect(): options.token must be a non-empty string with no control character (a line break, say), got ""',
    ],
    [
      { reconnect: 1, nope: 1 },
      'connect() has no option nope; the options are websocket, headers, token, rotateAfterExecutions, reconnect, maxReconnectAttempts, backoffMs, handshakeTimeoutMs, heartbeatIntervalMs, heartbeatTimeoutMs, timeout, countHostWaits, outbound, affinity',
    ],
  ])('refuses %j with CONNECTION_REJECTED', (options, message) => {
    expect(refusal(options)).toEqual({ code: 'CONNECTION_REJECTED', message });
  });

  it('takes a timeout of 0 or null, and gives each option its default', () => {
    expect(resolveConnectOptions({ timeout: 0 }).defaults.timeout).toBe(0);
    const resolved = resolveConnectOptions({ timeout: null, affinity: 'a' });
    expect(resolved).toEqual({
      websocket: undefined,
      headers: undefined,
      rotateAfterExecutions: undefined,
      reconnect: true,
      maxReconnectAttempts: 5,
      backoffMs: 100,
      handshakeTimeoutMs: 10_000,
      heartbeatIntervalMs: 5_000,
      heartbeatTimeoutMs: 5_000,
      affinity: 'a',
      defaults: { timeout: null, countHostWaits: undefined, outbound: undefined },
    });
  });
});
