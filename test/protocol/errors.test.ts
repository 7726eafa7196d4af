import { newMessagePortRpcSession, RpcTarget } from 'capnweb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EXECUTOR_ERROR_CODES,
  ExecutionTimeoutError,
  ExecutorError,
  formatToolNotFound,
  messageOf,
  rehydrateExecutorError,
  TIMEOUT_MESSAGE,
  ToolNotFoundError,
} from '../../src/protocol/index.js';

describe('ToolNotFoundError', () => {
  it('reads Tool "<tool>" not found, the text every upstream release uses', () => {
    const error = new ToolNotFoundError('list-issues');
    expect(error.message).toBe('Tool "list-issues" not found');
    expect(formatToolNotFound('nope')).toBe('Tool "nope" not found');
    expect(error.code).toBe('TOOL_NOT_FOUND');
    expect(error.tool).toBe('list-issues');
    expect(error.retryable).toBe(false);
    expect(error).toBeInstanceOf(ExecutorError);
    expect(error).toBeInstanceOf(Error);
  });
});

describe('ExecutionTimeoutError', () => {
  it('formats the native failure text exactly', () => {
    expect(ExecutionTimeoutError.format(250)).toBe(
      'Execution timed out at its 250 ms bound. Do less work per run and return the part that is already finished.',
    );
    const error = new ExecutionTimeoutError(60000);
    expect(error.message).toBe(
      'Execution timed out at its 60000 ms bound. Do less work per run and return the part that is already finished.',
    );
    expect(error.code).toBe('EXECUTION_TIMEOUT');
    expect(error.timeout).toBe(60000);
  });

  it('opens with TIMEOUT_MESSAGE, which is the text the dialect reports', () => {
    expect(TIMEOUT_MESSAGE).toBe('Execution timed out');
    expect(ExecutionTimeoutError.format(1).startsWith(TIMEOUT_MESSAGE)).toBe(true);
  });

  it('matches the whole first sentence of a native timeout', () => {
    expect(ExecutionTimeoutError.matches(ExecutionTimeoutError.format(0))).toBe(true);
    expect(ExecutionTimeoutError.matches(ExecutionTimeoutError.format(123456))).toBe(true);
    expect(ExecutionTimeoutError.matches('Execution timed out at its 30 ms bound.')).toBe(true);
    expect(ExecutionTimeoutError.matches('Execution timed out at its 30 ms bound.\nmore')).toBe(true);
  });

  it('rejects texts that only open with the same words', () => {
    expect(ExecutionTimeoutError.matches('Execution timed out waiting for the vendor API')).toBe(false);
    expect(ExecutionTimeoutError.matches('Execution timed out')).toBe(false);
    expect(ExecutionTimeoutError.matches('Execution timed out at its  ms bound.')).toBe(false);
    expect(ExecutionTimeoutError.matches('Execution timed out at its 30 ms bound.x')).toBe(false);
    expect(ExecutionTimeoutError.matches(' Execution timed out at its 30 ms bound.')).toBe(false);
    expect(ExecutionTimeoutError.matches('Error: Execution timed out at its 30 ms bound.')).toBe(false);
  });

  it('rejects anything that is not a string', () => {
    const error = new ExecutionTimeoutError(30);
    for (const value of [undefined, null, 30, {}, error, { message: error.message }, [error.message]]) {
      expect(ExecutionTimeoutError.matches(value)).toBe(false);
    }
  });
});

describe('messageOf', () => {
  it('takes err.message from an Error and String(err) from anything else', () => {
    expect(messageOf(new TypeError('bad'))).toBe('bad');
    expect(messageOf('str')).toBe('str');
    expect(messageOf({ a: 1 })).toBe('[object Object]');
    expect(messageOf(0)).toBe('0');
    expect(messageOf(undefined)).toBe('undefined');
  });
});

describe('rehydrateExecutorError, from objects whose class identity was lost', () => {
  it('keeps an ExecutorError that still has its class', () => {
    const error = new ExecutorError('QUEUE_FULL', 'full');
    expect(rehydrateExecutorError(error)).toBe(error);
  });

  it('rebuilds ToolNotFoundError from the tool field that crossed', () => {
    const withField = rehydrateExecutorError({ code: 'TOOL_NOT_FOUND', message: 'ignored', tool: 'search' });
    expect(withField).toBeInstanceOf(ToolNotFoundError);
    expect((withField as ToolNotFoundError).tool).toBe('search');
    expect((withField as ToolNotFoundError).message).toBe('Tool "search" not found');
  });

  it('rebuilds ExecutionTimeoutError from the timeout field that crossed', () => {
    const withField = rehydrateExecutorError({ code: 'EXECUTION_TIMEOUT', message: 'x', timeout: 40 });
    expect(withField).toBeInstanceOf(ExecutionTimeoutError);
    expect((withField as ExecutionTimeoutError).timeout).toBe(40);
    expect((withField as ExecutionTimeoutError).message).toBe(ExecutionTimeoutError.format(40));
  });

  it.each([
    ['TOOL_NOT_FOUND', 'Tool "search" not found'],
    ['EXECUTION_TIMEOUT', ExecutionTimeoutError.format(750)],
    ['EXECUTION_TIMEOUT', 'Execution timed out'],
  ] as const)(
    'never reads a %s back from its message: without its field it keeps the code and the text as they came',
    (code, message) => {
      const original = { code, message };
      const rebuilt = rehydrateExecutorError(original) as ExecutorError;
      expect(rebuilt.constructor).toBe(ExecutorError);
      expect(rebuilt.code).toBe(code);
      expect(rebuilt.message).toBe(message);
      expect(rebuilt.cause).toBe(original);
    },
  );

  it('rebuilds every other code as an ExecutorError, keeping message and retryable, with the original as cause', () => {
    for (const code of EXECUTOR_ERROR_CODES) {
      if (code === 'TOOL_NOT_FOUND' || code === 'EXECUTION_TIMEOUT') continue;
      const original = { code, message: `m-${code}`, retryable: true };
      const rebuilt = rehydrateExecutorError(original) as ExecutorError;
      expect(rebuilt).toBeInstanceOf(ExecutorError);
      expect(rebuilt.code).toBe(code);
      expect(rebuilt.message).toBe(`m-${code}`);
      expect(rebuilt.retryable).toBe(true);
      expect(rebuilt.cause).toBe(original);
    }
  });

  it('counts only retryable === true as retryable', () => {
    for (const retryable of [undefined, false, 'true', 1]) {
      const rebuilt = rehydrateExecutorError({ code: 'CONNECTION_BROKEN', message: 'm', retryable }) as ExecutorError;
      expect(rebuilt.retryable).toBe(false);
    }
  });

  it('passes through, untouched, everything without a recognized code', () => {
    const vendor = Object.assign(new Error('vendor'), { code: 'E_VENDOR' });
    const lowercase = { code: 'tool_not_found', message: 'Tool "x" not found' };
    for (const value of [vendor, lowercase, new TypeError('t'), { message: 'm' }, 'text', 42, null, undefined]) {
      expect(rehydrateExecutorError(value)).toBe(value);
    }
  });
});

/**
 * The crossing the contract is written for: a capnweb session rebuilds only the standard error
 * classes, so every typed error arrives as a plain `Error` and only its own fields (`code`,
 * `retryable`, `tool`, `timeout`) say what it was.
 */
describe('rehydrateExecutorError across a capnweb RPC session', () => {
  class Thrower extends RpcTarget {
    broken(): never {
      throw new ExecutorError('CONNECTION_BROKEN', 'Executor connection broke during execution', { retryable: true });
    }
    queueFull(): never {
      throw new ExecutorError('QUEUE_FULL', 'The queue is full');
    }
    toolNotFound(): never {
      throw new ToolNotFoundError('list-issues');
    }
    timedOut(): never {
      throw new ExecutionTimeoutError(500);
    }
    vendor(): never {
      throw Object.assign(new Error('vendor said no'), { code: 'E_VENDOR' });
    }
    typeError(): never {
      throw new TypeError('not a function');
    }
    returned(): Error {
      return new ToolNotFoundError('returned');
    }
  }

  let channel: MessageChannel;
  let remote: any;

  beforeAll(() => {
    channel = new MessageChannel();
    newMessagePortRpcSession(channel.port1, new Thrower());
    remote = newMessagePortRpcSession(channel.port2);
  });

  afterAll(() => {
    remote[Symbol.dispose]();
    channel.port1.close();
    channel.port2.close();
  });

  async function thrownBy(call: () => Promise<unknown>): Promise<Error> {
    try {
      await call();
    } catch (error) {
      return error as Error;
    }
    throw new Error('the remote call did not throw');
  }

  it('loses the class on the wire and keeps the code (so the crossing is real)', async () => {
    const error = await thrownBy(() => remote.toolNotFound());
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ExecutorError);
    expect(error.name).toBe('Error');
    expect((error as unknown as { code: unknown }).code).toBe('TOOL_NOT_FOUND');
  });

  it('rebuilds ToolNotFoundError', async () => {
    const rebuilt = rehydrateExecutorError(await thrownBy(() => remote.toolNotFound()));
    expect(rebuilt).toBeInstanceOf(ToolNotFoundError);
    expect((rebuilt as ToolNotFoundError).tool).toBe('list-issues');
    expect((rebuilt as ToolNotFoundError).message).toBe('Tool "list-issues" not found');
  });

  it('rebuilds ExecutionTimeoutError with its bound', async () => {
    const rebuilt = rehydrateExecutorError(await thrownBy(() => remote.timedOut()));
    expect(rebuilt).toBeInstanceOf(ExecutionTimeoutError);
    expect((rebuilt as ExecutionTimeoutError).timeout).toBe(500);
    expect((rebuilt as Error).message).toBe(ExecutionTimeoutError.format(500));
  });

  it('keeps retryable on CONNECTION_BROKEN and its absence elsewhere', async () => {
    const broken = rehydrateExecutorError(await thrownBy(() => remote.broken())) as ExecutorError;
    expect(broken).toBeInstanceOf(ExecutorError);
    expect(broken.code).toBe('CONNECTION_BROKEN');
    expect(broken.retryable).toBe(true);
    expect(broken.message).toBe('Executor connection broke during execution');

    const full = rehydrateExecutorError(await thrownBy(() => remote.queueFull())) as ExecutorError;
    expect(full.code).toBe('QUEUE_FULL');
    expect(full.retryable).toBe(false);
  });

  it('passes an unknown code and a standard error through untouched', async () => {
    const vendor = await thrownBy(() => remote.vendor());
    expect(rehydrateExecutorError(vendor)).toBe(vendor);
    expect((vendor as unknown as { code: unknown }).code).toBe('E_VENDOR');
    expect(vendor.message).toBe('vendor said no');

    const typeError = await thrownBy(() => remote.typeError());
    expect(typeError).toBeInstanceOf(TypeError);
    expect(rehydrateExecutorError(typeError)).toBe(typeError);
  });

  it('rebuilds an error that crossed as a return value', async () => {
    const returned = await remote.returned();
    expect(returned).not.toBeInstanceOf(ExecutorError);
    expect(rehydrateExecutorError(returned)).toBeInstanceOf(ToolNotFoundError);
  });
});
