/** `expect` semantics and the diff: exact values, matchers at any depth, implicit absence of failures. */
import { describe, expect, it } from 'vitest';
import { brief, checkExpectation, formatMismatches, isMatcher } from './expect.js';

describe('checkExpectation', () => {
  it('passes an exact match and reports each differing path', () => {
    expect(checkExpectation({ result: { a: [1, 2] }, logs: ['x'] }, { result: { a: [1, 2] }, logs: ['x'] })).toEqual(
      [],
    );
    const mismatches = checkExpectation(
      { result: { a: [1, 2] }, logs: ['x'] },
      { result: { a: [1, 3], b: 0 }, logs: ['[warn] x'] },
    );
    expect(formatMismatches(mismatches)).toBe(
      [
        '  result.a[1]: expected 2, got 3',
        '  result.b: expected (absent), got 0',
        '  logs[0]: expected "x", got "[warn] x"',
      ].join('\n'),
    );
  });

  it('leaves result and logs uncompared when left out, but requires error and threw absent', () => {
    expect(checkExpectation({ result: 1 }, { result: 1, logs: ['anything'] })).toEqual([]);
    expect(checkExpectation({ logs: [] }, { error: 'boom', logs: [] })).toEqual([
      { path: 'error', expected: '(absent)', actual: '"boom"' },
    ]);
    expect(checkExpectation({ result: 1 }, { threw: 'x' })).toHaveLength(2);
  });

  it('applies matchers anywhere in a value', () => {
    expect(checkExpectation({ error: { match: '^Unexpected token' } }, { error: "Unexpected token '}'" })).toEqual([]);
    expect(
      checkExpectation({ error: { match: '^Unexpected token' } }, { error: 'Invalid or unexpected token' }),
    ).toHaveLength(1);
    expect(
      checkExpectation(
        { result: [{ any: true }, { match: '^[0-9a-f-]{36}$' }] },
        { result: [null, '2b1c3f4e-0000-4000-8000-000000000000'] },
      ),
    ).toEqual([]);
    expect(checkExpectation({ result: { absent: true }, logs: [] }, { logs: [] })).toEqual([]);
    expect(checkExpectation({ result: { absent: true } }, { result: null })).toHaveLength(1);
    expect(checkExpectation({ result: { any: true } }, {})).toEqual([]);
  });

  it('distinguishes null from absence and counts array lengths', () => {
    expect(checkExpectation({ result: null }, {})).toHaveLength(1);
    expect(checkExpectation({ logs: ['a'] }, { logs: ['a', 'b'] })[0]?.path).toBe('logs');
  });

  it('compares calls only when written', () => {
    expect(checkExpectation({ result: 1 }, { result: 1, calls: ['codemode.notify'] })).toEqual([]);
    expect(checkExpectation({ calls: ['codemode.notify'] }, { calls: ['codemode.notify'] })).toEqual([]);
    expect(formatMismatches(checkExpectation({ calls: ['codemode.notify'] }, { calls: [] }))).toBe(
      '  calls: expected ["codemode.notify"] (1 items), got [] (0 items)',
    );
  });

  it('reports an unknown outcome field', () => {
    expect(checkExpectation({ result: 1 }, { result: 1, extra: true } as never)).toEqual([
      { path: 'extra', expected: '(absent)', actual: 'true' },
    ]);
  });
});

describe('isMatcher', () => {
  it('knows exactly the three one-key matcher shapes', () => {
    expect(isMatcher({ match: 'x' })).toBe(true);
    expect(isMatcher({ any: true })).toBe(true);
    expect(isMatcher({ absent: true })).toBe(true);
    expect(isMatcher({ match: 'x', other: 1 })).toBe(false);
    expect(isMatcher({ any: false })).toBe(false);
    expect(isMatcher({ match: 1 })).toBe(false);
  });
});

describe('brief', () => {
  it('shortens long strings so a large result stays readable in a diff', () => {
    expect(brief({ s: 'x'.repeat(200) })).toBe(`{"s":"${'x'.repeat(160)}… (200 characters)"}`);
    expect(brief([1, 'short'])).toBe('[1,"short"]');
  });
});
