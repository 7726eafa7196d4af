/**
 * Every failure through connect() is an ExecutorError with a code (issue 22, finding 9), against a
 * real daemon: results and requests that capnweb cannot carry, and calls the daemon answers with
 * an error of capnweb's rather than ours.
 */

import { serialize } from 'capnweb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutorError } from '../../../src/protocol/index.js';
import { connect, type RemoteExecutor } from '../../../src/remote/index.js';
import { exceedsWireDepth, MAX_WIRE_DEPTH } from '../../../src/server/calls/result-depth.js';
import { NodeWebSocket } from '../../support/client.js';
import { type Daemon, startDaemon, stopAllDaemons } from '../../support/daemon.js';

let daemon: Daemon;
let executor: RemoteExecutor;

beforeAll(async () => {
  daemon = await startDaemon();
  executor = await connect(daemon.url, { websocket: NodeWebSocket });
});

afterAll(async () => {
  await executor?.dispose();
  await stopAllDaemons();
});

/** The rejection of a call, which must be an ExecutorError. */
async function failure(call: Promise<unknown>): Promise<ExecutorError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ExecutorError);
  return error as ExecutorError;
}

describe('through connect()', () => {
  it('a result nested deeper than the connection carries is LIMIT_EXCEEDED naming the depth, and the session goes on', async () => {
    const error = await failure(
      executor.execute({ code: 'async () => { let x = 1; for (let i = 0; i < 300; i++) x = { x }; return x }' }),
    );
    expect(error.code).toBe('LIMIT_EXCEEDED');
    expect(error.message).toBe(
      "The execution's result is nested deeper than the 256 levels the executor connection carries",
    );
    await expect(executor.execute({ code: 'async () => 42' })).resolves.toMatchObject({ result: 42 });
  });
});

describe('a call capnweb cannot carry from the client', () => {
  it("is INVALID_REQUEST with capnweb's reason, not a plain TypeError, and the session goes on", async () => {
    const modules = { 'helper.js': new Map([['a', 1]]) } as unknown as Record<string, string>;
    const error = await failure(executor.execute({ code: 'async () => 1', modules }));
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.message).toMatch(/^The executor connection could not carry the call: Cannot serialize value: /);
    await expect(executor.execute({ code: 'async () => 42' })).resolves.toMatchObject({ result: 42 });
  });

  it('handle arguments nested deeper than capnweb serializes are INVALID_REQUEST', async () => {
    let args: unknown = 1;
    for (let i = 0; i < 300; i++) args = { args };
    const error = await failure(executor.invokeHandle({ executionId: 'none@nowhere', handle: 'h', args: [args] }));
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.message).toMatch(
      /^The executor connection could not carry the call: Serialization exceeded maximum allowed depth/,
    );
  });
});

describe('the depth the daemon measures', () => {
  it('is the depth capnweb itself serializes, to the level', () => {
    const nested = (levels: number): unknown => {
      let value: unknown = 1;
      for (let i = 0; i < levels; i++) value = { value };
      return value;
    };
    // capnweb's serialize() wraps nothing around the value: the daemon's answer is devaluated the same way.
    const deepestCarried = nested(MAX_WIRE_DEPTH - 1);
    expect(() => serialize(deepestCarried)).not.toThrow();
    expect(exceedsWireDepth(deepestCarried)).toBe(false);
    const tooDeep = nested(MAX_WIRE_DEPTH);
    expect(() => serialize(tooDeep)).toThrow(/maximum allowed depth/);
    expect(exceedsWireDepth(tooDeep)).toBe(true);
  });
});

describe('a request that is not one', () => {
  it('is INVALID_REQUEST, for execute and for invokeHandle', async () => {
    const notARequest = null as unknown as Parameters<RemoteExecutor['execute']>[0];
    const execute = await failure(executor.execute(notARequest));
    expect(execute.code).toBe('INVALID_REQUEST');
    expect(execute.message).toMatch(/^The request cannot be sent to the executor: /);
    const invoke = await failure(
      executor.invokeHandle(null as unknown as Parameters<RemoteExecutor['invokeHandle']>[0]),
    );
    expect(invoke.code).toBe('INVALID_REQUEST');
  });
});
