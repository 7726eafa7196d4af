/**
 * CodemodeExecutor's code cap: a program over `maxCodeBytes` is refused before normalization
 * parses it (a parse of megabytes of code costs the host seconds), and never reaches the native
 * executor. Over a native executor that really runs the code (node:vm).
 */
import { describe, expect, it, vi } from 'vitest';
import { CodemodeExecutor } from '../../src/codemode/codemode-executor.js';
import { formatCodeTooLarge } from '../../src/codemode/texts.js';
import { DEFAULT_MAX_CODE_BYTES } from '../../src/protocol/code-size.js';
import { VmExecutor } from './support/vm-executor.js';

/** How often acorn was asked to read code: normalization's parse and its import scan. */
const acornReads = vi.hoisted(() => ({ count: 0 }));
vi.mock('acorn', async (importOriginal) => {
  const acorn = await importOriginal<typeof import('acorn')>();
  return {
    ...acorn,
    parse: (...args: Parameters<typeof acorn.parse>) => {
      acornReads.count += 1;
      return acorn.parse(...args);
    },
    tokenizer: (...args: Parameters<typeof acorn.tokenizer>) => {
      acornReads.count += 1;
      return acorn.tokenizer(...args);
    },
  };
});

describe("CodemodeExecutor's maxCodeBytes", () => {
  it('refuses code over the default cap, unread and unsent, with a text naming the option', async () => {
    const native = new VmExecutor();
    const executor = new CodemodeExecutor(native);
    // Two bytes a character: over the cap by its UTF-8 size, though not by its length.
    const code = `const s = "${'é'.repeat(DEFAULT_MAX_CODE_BYTES / 2)}"\ns.length`;
    const reads = acornReads.count;
    expect(await executor.execute(code, [])).toEqual({
      result: undefined,
      error: formatCodeTooLarge(Buffer.byteLength(code), DEFAULT_MAX_CODE_BYTES),
    });
    expect(acornReads.count).toBe(reads);
    expect(native.requests).toHaveLength(0);
  });

  it('hands a 1.1 MB program (an inline data literal) to the native executor at the default cap, as upstream runs it', async () => {
    const native = new VmExecutor();
    const executor = new CodemodeExecutor(native);
    const data = 'a'.repeat(1_100_000);
    expect(await executor.execute(`async () => "${data}".length`, [])).toEqual({ result: 1_100_000, logs: [] });
    expect(native.requests).toHaveLength(1);
  });

  it('runs code at the cap, and takes a cap of its own', async () => {
    const native = new VmExecutor();
    const executor = new CodemodeExecutor(native, { maxCodeBytes: 12 });
    expect(await executor.execute('return 6 * 7', [])).toEqual({ result: 42, logs: [] });
    expect(await executor.execute('return 6 * 7 ', [])).toEqual({
      result: undefined,
      error: formatCodeTooLarge(13, 12),
    });
    expect(native.requests).toHaveLength(1);
  });

  it.each([0, 1.5, '1000', null])('refuses %s as the option, naming it', (value) => {
    expect(() => new CodemodeExecutor(new VmExecutor(), { maxCodeBytes: value as number })).toThrow(
      new TypeError(
        `CodemodeExecutor option maxCodeBytes must be a positive integer number of bytes, or undefined (15 MiB), got ${typeof value === 'string' ? `"${value}"` : String(value)}.`,
      ),
    );
  });
});
