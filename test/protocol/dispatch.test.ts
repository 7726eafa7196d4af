import { describe, expect, it } from 'vitest';
import {
  COMPLETED_MESSAGE,
  type CompletionGuard,
  createEnvelopeDispatch,
  encodeErrorEnvelope,
  encodeResultEnvelope,
  type ProviderHandler,
  parseDispatchArguments,
  ToolNotFoundError,
  UNPRINTABLE_THROW_MESSAGE,
} from '../../src/protocol/index.js';

describe('parseDispatchArguments', () => {
  it('spreads an array', () => {
    expect(parseDispatchArguments('[1,"two",{"three":3}]')).toEqual([1, 'two', { three: 3 }]);
    expect(parseDispatchArguments('[]')).toEqual([]);
    expect(parseDispatchArguments('[[1,2]]')).toEqual([[1, 2]]);
    expect(parseDispatchArguments('[null]')).toEqual([null]);
  });

  it('wraps any other value in a one-element array', () => {
    expect(parseDispatchArguments('{"a":1}')).toEqual([{ a: 1 }]);
    expect(parseDispatchArguments('"s"')).toEqual(['s']);
    expect(parseDispatchArguments('0')).toEqual([0]);
    expect(parseDispatchArguments('false')).toEqual([false]);
    expect(parseDispatchArguments('null')).toEqual([null]);
  });

  it('reads an empty or missing string as no arguments', () => {
    expect(parseDispatchArguments('')).toEqual([]);
    expect(parseDispatchArguments(undefined)).toEqual([]);
    expect(parseDispatchArguments(null)).toEqual([]);
  });

  it('decodes binaries through the codec', () => {
    const [bytes, buffer] = parseDispatchArguments(
      '[{"__codemode_binary_v1__":"Uint8Array","data":"AQI="},{"__codemode_binary_v1__":"ArrayBuffer","data":"Aw=="}]',
    );
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(Array.from(bytes as Uint8Array)).toEqual([1, 2]);
    expect(buffer).toBeInstanceOf(ArrayBuffer);
  });

  it('throws on text that is not JSON', () => {
    expect(() => parseDispatchArguments('[1,')).toThrow(SyntaxError);
  });
});

describe('the envelopes', () => {
  it('wraps a value as {result}, undefined as {}', () => {
    expect(encodeResultEnvelope(42)).toBe('{"result":42}');
    expect(encodeResultEnvelope(undefined)).toBe('{}');
    expect(encodeResultEnvelope(null)).toBe('{"result":null}');
    expect(encodeResultEnvelope(new Uint8Array([1]))).toBe(
      '{"result":{"__codemode_binary_v1__":"Uint8Array","data":"AQ=="}}',
    );
  });

  it('wraps a message as {error}', () => {
    expect(encodeErrorEnvelope('bad "thing"')).toBe('{"error":"bad \\"thing\\""}');
  });
});

/** A promise with its settle functions outside, to hold a tool call in flight. */
function deferred<T>(): { promise: Promise<T>; resolve(value: T): void; reject(reason: unknown): void } {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function dispatchOver(handler: ProviderHandler, guard: CompletionGuard = { active: true }) {
  return createEnvelopeDispatch({ api: handler }, guard);
}

describe('createEnvelopeDispatch', () => {
  it('calls the provider handler with the tool and the parsed arguments', async () => {
    const calls: [string, unknown[]][] = [];
    const dispatch = dispatchOver((tool, args) => {
      calls.push([tool, args]);
      return { echoed: args };
    });
    expect(await dispatch('api', 'search', '[{"q":"x"},2]')).toBe('{"result":{"echoed":[{"q":"x"},2]}}');
    expect(await dispatch('api', 'list', '')).toBe('{"result":{"echoed":[]}}');
    expect(calls).toEqual([
      ['search', [{ q: 'x' }, 2]],
      ['list', []],
    ]);
  });

  it('encodes an undefined result as {}', async () => {
    expect(await dispatchOver(() => undefined)('api', 't', '[]')).toBe('{}');
  });

  it('awaits an asynchronous result', async () => {
    expect(await dispatchOver(async () => 'later')('api', 't', '[]')).toBe('{"result":"later"}');
  });

  it('reports err.message for an Error and String(err) for anything else', async () => {
    const cases: [unknown, string][] = [
      [new TypeError('bad'), '{"error":"bad"}'],
      ['str', '{"error":"str"}'],
      [{ a: 1 }, '{"error":"[object Object]"}'],
      [0, '{"error":"0"}'],
      [new Error(''), '{"error":""}'],
    ];
    for (const [thrown, envelope] of cases) {
      expect(await dispatchOver(() => Promise.reject(thrown))('api', 't', '[]')).toBe(envelope);
    }
  });

  it('catches a synchronous throw', async () => {
    const dispatch = dispatchOver(() => {
      throw new Error('caught:sync');
    });
    expect(await dispatch('api', 't', '[]')).toBe('{"error":"caught:sync"}');
  });

  it('reports a result the codec cannot encode as an error envelope', async () => {
    expect(await dispatchOver(() => 1n)('api', 't', '[]')).toBe('{"error":"Do not know how to serialize a BigInt"}');
  });

  it('reports argument JSON that does not parse as an error envelope', async () => {
    const envelope = JSON.parse(await dispatchOver(() => 'never')('api', 't', '[1,')) as { error: string };
    expect(typeof envelope.error).toBe('string');
    expect(envelope.error.length).toBeGreaterThan(0);
  });

  it('answers a provider with no handler with Tool "<tool>" not found', async () => {
    const dispatch = dispatchOver(() => 'unused');
    expect(await dispatch('other', 'search', '[]')).toBe('{"error":"Tool \\"search\\" not found"}');
    // Names on Object.prototype are not handlers.
    for (const provider of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      expect(await dispatch(provider, 'x', '[]')).toBe('{"error":"Tool \\"x\\" not found"}');
    }
  });

  it('passes on the handler’s own ToolNotFoundError', async () => {
    const dispatch = dispatchOver((tool) => {
      throw new ToolNotFoundError(tool);
    });
    expect(await dispatch('api', 'list-issues', '[]')).toBe('{"error":"Tool \\"list-issues\\" not found"}');
  });

  it('reports a handler that is not a function as an error envelope', async () => {
    const dispatch = createEnvelopeDispatch({ api: 42 as unknown as ProviderHandler }, { active: true });
    const envelope = JSON.parse(await dispatch('api', 't', '[]')) as { error?: unknown };
    expect(typeof envelope.error).toBe('string');
  });

  it('never rejects, even for a thrown value with no text form', async () => {
    let conversionText = '';
    try {
      String(Object.create(null));
    } catch (error) {
      conversionText = (error as Error).message;
    }
    expect(conversionText).not.toBe('');
    expect(await dispatchOver(() => Promise.reject(Object.create(null)))('api', 't', '[]')).toBe(
      JSON.stringify({ error: conversionText }),
    );

    const throwingGetter = Object.defineProperty(new Error('x'), 'message', {
      get() {
        throw new RangeError('getter failed');
      },
    });
    expect(await dispatchOver(() => Promise.reject(throwingGetter))('api', 't', '[]')).toBe(
      '{"error":"getter failed"}',
    );

    const hopeless = {
      toString() {
        throw Object.create(null);
      },
    };
    expect(await dispatchOver(() => Promise.reject(hopeless))('api', 't', '[]')).toBe(
      JSON.stringify({ error: UNPRINTABLE_THROW_MESSAGE }),
    );
    expect(UNPRINTABLE_THROW_MESSAGE).toBe('The tool threw a value that cannot be converted to text');
  });
});

describe('the completion guard', () => {
  it('reads Execution has already completed', () => {
    expect(COMPLETED_MESSAGE).toBe('Execution has already completed');
  });

  it('refuses a call made after the guard flips, without running the handler', async () => {
    let ran = 0;
    const guard = { active: true };
    const dispatch = dispatchOver(() => {
      ran += 1;
      return 'ran';
    }, guard);
    expect(await dispatch('api', 't', '[]')).toBe('{"result":"ran"}');
    guard.active = false;
    expect(await dispatch('api', 't', '[]')).toBe('{"error":"Execution has already completed"}');
    expect(await dispatch('missing', 't', '[]')).toBe('{"error":"Execution has already completed"}');
    expect(ran).toBe(1);
  });

  it('gives a call in flight when it flips the completion text instead of its result', async () => {
    const pending = deferred<string>();
    const guard = { active: true };
    const call = dispatchOver(() => pending.promise, guard)('api', 't', '[]');
    guard.active = false;
    pending.resolve('too late');
    expect(await call).toBe('{"error":"Execution has already completed"}');
  });

  it('gives a call that fails in flight the completion text instead of its error', async () => {
    const pending = deferred<string>();
    const guard = { active: true };
    const call = dispatchOver(() => pending.promise, guard)('api', 't', '[]');
    guard.active = false;
    pending.reject(new Error('failed late'));
    expect(await call).toBe('{"error":"Execution has already completed"}');
  });

  it('lets a call that settled before the flip keep its result', async () => {
    const guard = { active: true };
    const call = dispatchOver(async () => 'in time', guard)('api', 't', '[]');
    const envelope = await call;
    guard.active = false;
    expect(envelope).toBe('{"result":"in time"}');
  });
});
