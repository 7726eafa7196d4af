/** Client-side helpers: a counting WebSocket constructor, and a tool gate the test opens. */
import { expect } from 'vitest';
import { WebSocket } from 'ws';
import { type Dispatch, ExecutorError, encodeResultEnvelope } from '../../src/protocol/index.js';
import type { WebSocketConstructor } from '../../src/remote/index.js';

/** The ws constructor, which sends headers; Node 20 has no global WebSocket. */
export const NodeWebSocket: WebSocketConstructor = WebSocket;

/** A WebSocket constructor that counts the sockets it opens. */
export function countingWebSocket(): { websocket: WebSocketConstructor; readonly opened: number } {
  let opened = 0;
  class Counting extends WebSocket {
    constructor(url: string, options?: WebSocket.ClientOptions) {
      super(url, options);
      opened += 1;
    }
  }
  return {
    websocket: Counting,
    get opened() {
      return opened;
    },
  };
}

/**
 * A provider whose one tool blocks until the test opens the gate: an execution that calls it is
 * certainly in flight at the daemon once `reached` resolves.
 */
export function toolGate(): {
  provider: { name: string; tools: string[] };
  code: string;
  dispatch: Dispatch;
  reached: Promise<void>;
  calls: number;
  open(): void;
} {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const gate = {
    provider: { name: 'gate', tools: ['wait'] },
    code: 'async () => await gate.wait()',
    calls: 0,
    reached,
    open,
    dispatch: async () => {
      gate.calls += 1;
      reach();
      await opened;
      return encodeResultEnvelope('released');
    },
  };
  return gate;
}

/** The ExecutorError a promise rejects with; fails the test when it resolves or rejects with anything else. */
export async function rejection(promise: Promise<unknown>): Promise<ExecutorError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ExecutorError);
  return error as ExecutorError;
}
