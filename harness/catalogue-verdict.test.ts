/**
 * Which side decides a case on each side, on hand-written outcomes: `expect` when there is one,
 * otherwise ours for a column or ours-remote, and every column that runs the case for ours.
 */
import { describe, expect, it } from 'vitest';
import type { LoadedCase, Outcome, SideName } from './case-model.js';
import { verdictFor } from './catalogue-verdict.js';
import { comparisonPartners } from './sides/side.js';

const base: LoadedCase = {
  id: 'c',
  description: 'd',
  features: [],
  code: 'async () => 1',
  file: 'cases/x.yaml',
  line: 3,
};
const withExpect: LoadedCase = { ...base, expect: { result: 1, logs: [] } };
const skippedOnOld: LoadedCase = {
  ...base,
  skipOn: [{ versions: ['0.2.2', '0.3.8'], reason: 'The binary codec arrived in 0.3.7.' }],
};

const one: Outcome = { result: 1, logs: [] };
const two: Outcome = { result: 2, logs: [] };

/** Partners answer from this table; asking for any other side is a test failure. */
function partner(table: Partial<Record<SideName, Outcome>>) {
  const asked: SideName[] = [];
  const call = async (side: SideName) => {
    asked.push(side);
    const outcome = table[side];
    if (!outcome) throw new Error(`nobody expected ${side} to be asked`);
    return outcome;
  };
  return { call, asked };
}

describe('comparisonPartners', () => {
  it('compares ours with every column that runs the case, and everything else with ours', () => {
    expect(comparisonPartners(base, 'ours')).toEqual(['0.2.2', '0.3.8', '0.4.4', 'latest']);
    expect(comparisonPartners(skippedOnOld, 'ours')).toEqual(['0.4.4', 'latest']);
    expect(comparisonPartners({ ...base, reference: false, reason: 'r' }, 'ours')).toEqual([]);
    expect(comparisonPartners(base, 'ours-remote')).toEqual(['ours']);
    expect(comparisonPartners(base, 'latest')).toEqual(['ours']);
  });
});

describe('verdictFor', () => {
  it('judges a case with expect against it alone, asking no partner', async () => {
    const ask = partner({});
    expect(await verdictFor(withExpect, 'latest', one, ask.call)).toBeNull();
    expect(await verdictFor(withExpect, 'latest', two, ask.call)).toMatch(
      /cases\/x\.yaml:3 \(case "c"\) on latest does not meet expect[\s\S]*result: expected 1, got 2/,
    );
    expect(ask.asked).toEqual([]);
  });

  it('compares a column with ours, whole', async () => {
    const ask = partner({ ours: one });
    expect(await verdictFor(base, '0.4.4', one, ask.call)).toBeNull();
    expect(await verdictFor(base, '0.4.4', { ...one, logs: ['x'] }, ask.call)).toMatch(
      /0\.4\.4 differs from ours[\s\S]*\n {2}logs: ours \[\], 0\.4\.4 \["x"\]$/,
    );
    expect(ask.asked).toEqual(['ours', 'ours']);
  });

  it('lets every running column decide for ours, and reports each that disagrees', async () => {
    const ask = partner({ '0.4.4': one, latest: two });
    const verdict = await verdictFor(skippedOnOld, 'ours', one, ask.call);
    expect(verdict).toMatch(/ours differs from latest/);
    expect(verdict).not.toMatch(/differs from 0\.4\.4/);
    expect(ask.asked).toEqual(['0.4.4', 'latest']);
  });

  it('fails a case that nothing decides', async () => {
    const ask = partner({});
    expect(await verdictFor({ ...base, reference: false, reason: 'r' }, 'ours', one, ask.call)).toMatch(
      /has no expect, and no other side ran/,
    );
  });

  it('lets a broken partner reject, so the harness failure is not taken for a result', async () => {
    await expect(
      verdictFor(base, 'latest', one, async () => Promise.reject(new Error('ours did not start'))),
    ).rejects.toThrow('ours did not start');
  });
});
