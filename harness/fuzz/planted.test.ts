/**
 * The fuzzer finds a difference nobody told it about: ours with one text changed (console.warn's
 * prefix, through a side wrapper injected here, so nothing test-only ships in src/) is compared
 * with ours as it is, and the run must shrink the difference into a draft of a few lines, within
 * the first 500 programs of the seed. Both sides run in this process (no wrangler dev): about a
 * minute on a loaded 2-core machine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withSlack } from '../../test/support/machine-slack.js';
import type { Outcome } from '../case-model.js';
import type { ColumnId } from '../columns.js';
import { loadDraftFile } from '../load-cases.js';
import type { Side } from '../side-model.js';
import { startSide } from '../sides.js';
import { renderProgram, samplePrograms } from './generator.js';
import { runFuzz } from './run.js';

const SEED = 1;
const scratch = mkdtempSync(join(tmpdir(), 'fuzz-planted-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Ours, with the one planted change: console.warn lines read "[warning] " instead of "[warn] ". */
function planted(side: Side): Side {
  const plant = (outcome: Outcome): Outcome =>
    outcome.logs ? { ...outcome, logs: outcome.logs.map((line) => line.replace(/^\[warn\] /, '[warning] ')) } : outcome;
  return { ...side, run: async (item) => plant(await side.run(item)) };
}

/** `ours` is the planted side; the column it is compared with is ours as it is. */
async function starter(name: ColumnId): Promise<Side> {
  if (name === 'ours') return planted(await startSide('ours'));
  return { ...(await startSide('ours')), name };
}

describe('a planted difference', () => {
  it(
    'is found within 500 programs and shrunk into a draft of a few lines',
    async () => {
      // Where the seed first writes a warning: the run goes just past it, so the test stays short.
      const first = samplePrograms(SEED, 500).findIndex((program) => renderProgram(program).includes('console.warn('));
      expect(first).toBeGreaterThanOrEqual(0);
      const drafts = join(scratch, 'drafts');
      const summary = await runFuzz({
        seed: SEED,
        count: first + 1,
        column: 'ours-remote',
        draftsDir: drafts,
        starter,
        shrinkRuns: 60,
        print: () => {},
      });
      const found = summary.differences.find((difference) => difference.signature === 'logs:array/array');
      expect(found, JSON.stringify(summary, null, 2)).toBeDefined();
      expect(found!.index).toBeLessThanOrEqual(first);
      expect(found!.isNew).toBe(true);
      const [draft] = loadDraftFile(found!.draft);
      expect(draft!.code.split('\n').length).toBeLessThanOrEqual(5);
      expect(draft!.code).toContain('console.warn(');
      expect(draft!.expect.logs).toContainEqual(expect.stringMatching(/^\[warning\] /));
      expect(draft!.upstream!.expect.logs).toContainEqual(expect.stringMatching(/^\[warn\] /));
      expect(draft!.fuzz).toMatchObject({ seed: SEED, column: 'ours-remote', index: found!.index });
    },
    withSlack(240_000),
  );
});
