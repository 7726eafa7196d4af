/**
 * How much of a program the leading-import scan reads: only its imports and a token past them,
 * never a tokenization of the whole program (a huge one would stall the host).
 */
import { describe, expect, it, vi } from 'vitest';
import { separateImports } from '../../src/protocol/imports.js';

/** Tokens acorn's tokenizer has handed out. */
const tokensRead = vi.hoisted(() => ({ count: 0 }));
vi.mock('acorn', async (importOriginal) => {
  const acorn = await importOriginal<typeof import('acorn')>();
  return {
    ...acorn,
    tokenizer: (...args: Parameters<typeof acorn.tokenizer>) => {
      const source = acorn.tokenizer(...args)[Symbol.iterator]();
      return {
        [Symbol.iterator]: () => ({
          next: () => {
            tokensRead.count += 1;
            return source.next();
          },
        }),
      };
    },
  };
});

/** Ten thousand statements, forty thousand tokens. */
const LONG_BODY = `${'let n = 0;\n'.repeat(5_000)}async () => n`;

function tokensToSeparate(code: string): number {
  tokensRead.count = 0;
  separateImports(code);
  return tokensRead.count;
}

describe('separateImports reads only the leading imports', () => {
  // The most: the declaration's tokens, and the few after them that show where it ends.
  it.each([
    ['no import', LONG_BODY, 1],
    ['one import', `import a from 'a';\n${LONG_BODY}`, 6],
    ['an import with attributes', `import d from './d.json' with { type: 'json' };\n${LONG_BODY}`, 12],
    // `let` and `n` could still be names of a clause; `=` cannot.
    ['a clause that never reaches from', `import a\n${LONG_BODY}`, 5],
    ['a dynamic import', `import('a');\n${LONG_BODY}`, 2],
  ])('%s', (_name, code, most) => {
    expect(tokensToSeparate(code)).toBeLessThanOrEqual(most);
  });

  it('still separates what it reads', () => {
    expect(separateImports(`import a from 'a';\n${LONG_BODY}`)).toEqual({
      imports: "import a from 'a';",
      body: LONG_BODY,
    });
  });
});
