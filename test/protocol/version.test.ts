import { describe, expect, it } from 'vitest';
import {
  assertProtocolCompatible,
  ExecutorError,
  formatProtocolMismatch,
  PROTOCOL_VERSION,
} from '../../src/protocol/index.js';

function thrownBy(call: () => void): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error('it did not throw');
}

describe('assertProtocolCompatible', () => {
  it('accepts the same version', () => {
    expect(() => assertProtocolCompatible(PROTOCOL_VERSION)).not.toThrow();
    expect(() => assertProtocolCompatible(7, 7)).not.toThrow();
  });

  it('throws PROTOCOL_MISMATCH with the text docs/protocol.md states when the server speaks v2', () => {
    const error = thrownBy(() => assertProtocolCompatible(2));
    expect(error).toBeInstanceOf(ExecutorError);
    expect((error as ExecutorError).code).toBe('PROTOCOL_MISMATCH');
    expect((error as ExecutorError).retryable).toBe(false);
    expect((error as ExecutorError).message).toBe('Executor protocol mismatch: client speaks v1, server speaks v2');
  });

  it('compares by exact equality, never by order or by loose equality', () => {
    for (const server of [PROTOCOL_VERSION + 1, PROTOCOL_VERSION - 1, String(PROTOCOL_VERSION), undefined, null, 1.5]) {
      const error = thrownBy(() => assertProtocolCompatible(server)) as ExecutorError;
      expect(error.code).toBe('PROTOCOL_MISMATCH');
      expect(error.message).toBe(formatProtocolMismatch(PROTOCOL_VERSION, server));
    }
  });

  it('names the client version it was given', () => {
    const error = thrownBy(() => assertProtocolCompatible(1, 3)) as ExecutorError;
    expect(error.message).toBe('Executor protocol mismatch: client speaks v3, server speaks v1');
  });
});
