/**
 * The catalogue as tests: one test per case and side, named `<file> › <id>`. Each side is a
 * describe of its own; a case skipped on a side (`skipOn`, or `reference: false` on a reference
 * column) is a skipped test there. Reference columns plug in by adding to `SIDES`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIDE_NAMES, type SideName } from './case-model.js';
import { judge } from './expect.js';
import { caseTitle, loadCatalogue } from './load-cases.js';
import { skipReason, startSide, type Side } from './sides/index.js';

const cases = loadCatalogue();

/** The sides this spec runs, in order. */
const SIDES: readonly SideName[] = ['ours', 'ours-remote'];

function describeSide(name: SideName): void {
  describe(`catalogue on ${name}`, () => {
    let side: Side | undefined;
    beforeAll(async () => {
      side = await startSide(name);
    });
    afterAll(async () => {
      await side?.dispose();
    });

    for (const item of cases) {
      const skipped = skipReason(item, name) !== null;
      it.skipIf(skipped)(caseTitle(item), async () => {
        if (!side) throw new Error(`The ${name} side did not start`);
        const outcome = await side.run(item);
        const verdict = judge(item, name, outcome);
        if (verdict !== null) expect.fail(verdict);
      });
    }
  });
}

describe('the catalogue', () => {
  it('holds at least 150 cases, each of which runs on some side', () => {
    expect(cases.length).toBeGreaterThanOrEqual(150);
    const nowhere = cases.filter((item) => SIDE_NAMES.every((side) => skipReason(item, side) !== null)).map((item) => item.id);
    expect(nowhere).toEqual([]);
  });
});

for (const name of SIDES) describeSide(name);
