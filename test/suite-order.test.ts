import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/build-state.js';
import { LONGEST_FIRST, longestFirst } from './support/suite-order.js';

describe("the suite's order", () => {
  it('names only test files that exist, each once', () => {
    expect(LONGEST_FIRST.filter((file) => !file.endsWith('.test.ts') || !existsSync(join(ROOT, file)))).toEqual([]);
    expect(new Set(LONGEST_FIRST).size).toBe(LONGEST_FIRST.length);
  });

  it('starts the longest files first, in their order, and leaves the others in the order vitest gave', () => {
    const others = ['test/a.test.ts', 'test/b.test.ts'];
    const given = [others[0]!, ...[...LONGEST_FIRST].reverse(), others[1]!];
    expect(longestFirst(given, (file) => file)).toEqual([...LONGEST_FIRST, ...others]);
  });
});
