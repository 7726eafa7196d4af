/**
 * CodemodeExecutor remembers normalization per code string: the same program sent again is not
 * parsed again, the memory is bounded by `normalizeCacheChars` (least recently used out), and 0
 * turns it off. Over a native executor that really runs the code (node:vm).
 */
import { describe, expect, it, vi } from 'vitest';
import { CodemodeExecutor } from '../../src/codemode/codemode-executor.js';
import { normalizeCode } from '../../src/codemode/normalize.js';
import { VmExecutor } from './support/vm-executor.js';

/** How often acorn was asked to parse code: normalization's parse (the import scan tokenizes). */
const acornParses = vi.hoisted(() => ({ count: 0 }));
vi.mock('acorn', async (importOriginal) => {
  const acorn = await importOriginal<typeof import('acorn')>();
  return {
    ...acorn,
    parse: (...args: Parameters<typeof acorn.parse>) => {
      acornParses.count += 1;
      return acorn.parse(...args);
    },
  };
});

/** Parses while running `code` once on `executor`, and the outcome. */
async function parsesOf(executor: CodemodeExecutor, code: string): Promise<{ parses: number; result: unknown }> {
  const before = acornParses.count;
  const { result, error } = await executor.execute(code, []);
  expect(error).toBeUndefined();
  return { parses: acornParses.count - before, result };
}

const SIX_BY_SEVEN = 'const answer = 6 * 7\nanswer';
const THREE_BY_FIVE = 'const product = 3 * 5\nproduct';

describe("CodemodeExecutor's normalization memory", () => {
  it('parses a program once, and runs what normalizeCode makes of it every time', async () => {
    const native = new VmExecutor();
    const executor = new CodemodeExecutor(native);
    expect(await parsesOf(executor, SIX_BY_SEVEN)).toEqual({ parses: 1, result: 42 });
    expect(await parsesOf(executor, SIX_BY_SEVEN)).toEqual({ parses: 0, result: 42 });
    expect(await parsesOf(executor, THREE_BY_FIVE)).toEqual({ parses: 1, result: 15 });
    expect(native.requests.map((request) => request.code)).toEqual(
      [SIX_BY_SEVEN, SIX_BY_SEVEN, THREE_BY_FIVE].map(normalizeCode),
    );
  });

  it('parses every time with normalizeCacheChars: 0', async () => {
    const executor = new CodemodeExecutor(new VmExecutor(), { normalizeCacheChars: 0 });
    expect(await parsesOf(executor, SIX_BY_SEVEN)).toEqual({ parses: 1, result: 42 });
    expect(await parsesOf(executor, SIX_BY_SEVEN)).toEqual({ parses: 1, result: 42 });
  });

  it('forgets the least recently used program once the characters pass the bound', async () => {
    const pairChars = (code: string) => code.length + normalizeCode(code).length;
    // Room for either program with its normalized form, not for both.
    const bound = Math.max(pairChars(SIX_BY_SEVEN), pairChars(THREE_BY_FIVE)) + 1;
    expect(bound).toBeLessThan(pairChars(SIX_BY_SEVEN) + pairChars(THREE_BY_FIVE));
    const executor = new CodemodeExecutor(new VmExecutor(), { normalizeCacheChars: bound });
    await parsesOf(executor, SIX_BY_SEVEN);
    expect((await parsesOf(executor, SIX_BY_SEVEN)).parses).toBe(0);
    expect((await parsesOf(executor, THREE_BY_FIVE)).parses).toBe(1);
    expect((await parsesOf(executor, THREE_BY_FIVE)).parses).toBe(0);
    expect(await parsesOf(executor, SIX_BY_SEVEN)).toEqual({ parses: 1, result: 42 });
  });

  it('does not remember a program larger than the whole bound', async () => {
    const executor = new CodemodeExecutor(new VmExecutor(), { normalizeCacheChars: SIX_BY_SEVEN.length });
    expect((await parsesOf(executor, SIX_BY_SEVEN)).parses).toBe(1);
    expect((await parsesOf(executor, SIX_BY_SEVEN)).parses).toBe(1);
  });

  it.each([-1, 1.5, '1000', null])('refuses %s as the option, naming it', (value) => {
    expect(() => new CodemodeExecutor(new VmExecutor(), { normalizeCacheChars: value as number })).toThrow(
      new TypeError(
        `CodemodeExecutor option normalizeCacheChars must be a whole number of characters, 0 to remember none, or undefined (1 Mi), got ${typeof value === 'string' ? `"${value}"` : String(value)}.`,
      ),
    );
  });
});
