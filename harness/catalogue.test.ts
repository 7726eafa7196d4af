/**
 * The catalogue as tests: one test per case and side, named `<file> › <id>`, on ours, ours over a
 * daemon, and every reference column (the real DynamicWorkerExecutor of each pinned release under
 * `wrangler dev`). Each side is a describe of its own; a case skipped on a side (`skipOn`) is a
 * skipped test there with the reason in its title. `reference: false` cases have a describe of
 * their own, on our sides only, whose reference callback throws if anything calls it.
 *
 * Every side is started once, up front and at most two at a time (two cores), and stopped at the
 * end; a side that cannot start fails its own describe with its output. The summary at the end
 * names, per side, how many cases passed, were skipped and failed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoadedCase, REFERENCE_COLUMNS, SIDE_NAMES, type SideName } from './case-model.js';
import { referenceCalledForStandalone, skippedTitle } from './catalogue-messages.js';
import { CatalogueSides } from './catalogue-sides.js';
import { type CatalogueTestMeta, emptyTally, formatSummary, type TaskLike, tallyTasks } from './catalogue-summary.js';
import { type PartnerOutcome, verdictFor } from './catalogue-verdict.js';
import { caseTitle, loadCatalogue } from './load-cases.js';
import { sideVersions } from './side-versions.js';
import { isReferenceColumn, skipReason, startSide } from './sides/index.js';
import { comparisonPartners } from './sides/side.js';

const cases = loadCatalogue();
const referenced = cases.filter((item) => item.reference !== false);
const standalone = cases.filter((item) => item.reference === false);

const OUR_SIDES = ['ours', 'ours-remote'] as const satisfies readonly SideName[];
/** The summary's rows, in order. */
const ALL_SIDES: readonly SideName[] = [...OUR_SIDES, ...REFERENCE_COLUMNS];

/** Cold starts at once: a `wrangler dev` cold start is CPU-bound, and the machine has two cores. */
const PARALLEL_STARTS = 2;
/** Five sides, two at a time, each allowed a slow cold start (and its port retries) on a shared machine. */
const START_TIMEOUT_MS = 15 * 60_000;
const STOP_TIMEOUT_MS = 5 * 60_000;
/** Beyond a case's own timeout (upstream's longest default is 60 s): the reference round trip and its grace. */
const CASE_DEFAULT_TIMEOUT_MS = 60_000;
const CASE_GRACE_MS = 45_000;

const sides = new CatalogueSides(startSide);

/** A comparison partner's outcome, from the same memoized run the partner's own test uses. */
const partnerOutcome: PartnerOutcome = (side, item) => sides.outcome(side, item);

/** The standalone path must never reach a reference: if it does, the case's id says which case did. */
const standalonePartner: PartnerOutcome = (side, item) => {
  if (isReferenceColumn(side)) throw new Error(referenceCalledForStandalone(item.id));
  return sides.outcome(side, item);
};

function caseTest(item: LoadedCase, side: SideName, partner: PartnerOutcome): void {
  const skip = skipReason(item, side);
  const catalogue: CatalogueTestMeta = skip === null ? { side, caseId: item.id } : { side, caseId: item.id, skip };
  const title = skip === null ? caseTitle(item) : skippedTitle(caseTitle(item), skip);
  const timeout = (item.options?.timeout ?? CASE_DEFAULT_TIMEOUT_MS) + CASE_GRACE_MS;
  it.skipIf(skip !== null)(title, { timeout, meta: { catalogue } }, async ({ task }) => {
    let verdict: string | null;
    try {
      verdict = await verdictFor(item, side, await sides.outcome(side, item), partner);
    } catch (error) {
      // No outcome exists: the harness broke. Counted apart in the summary.
      task.meta.catalogue = { ...catalogue, infra: true };
      throw error;
    }
    if (verdict !== null) expect.fail(verdict);
  });
}

function describeSide(title: string, side: SideName, items: readonly LoadedCase[], partner: PartnerOutcome): void {
  describe(title, () => {
    beforeAll(async () => {
      await sides.ready(side); // A side that did not start fails here once, with its output.
    }, START_TIMEOUT_MS);
    for (const item of items) caseTest(item, side, partner);
  });
}

/** The sides some selected test will run on (a `-t` filter may leave columns out), with their comparison partners. */
function sidesToStart(root: TaskLike): SideName[] {
  const needed = new Set<SideName>();
  const byId = new Map(cases.map((item) => [item.id, item]));
  const visit = (task: TaskLike) => {
    const meta = task.meta.catalogue;
    if (task.type === 'test' && meta && task.mode === 'run') {
      needed.add(meta.side);
      const item = byId.get(meta.caseId);
      if (item && item.expect === undefined) for (const other of comparisonPartners(item, meta.side)) needed.add(other);
    }
    for (const child of task.tasks ?? []) visit(child);
  };
  visit(root);
  return ALL_SIDES.filter((side) => needed.has(side));
}

// biome-ignore lint/correctness/noEmptyPattern: vitest passes the file as the second argument only.
beforeAll(async ({}, file) => {
  await sides.startAll(sidesToStart(file), PARALLEL_STARTS);
}, START_TIMEOUT_MS);

// biome-ignore lint/correctness/noEmptyPattern: as above.
afterAll(async ({}, file) => {
  try {
    const tallies = tallyTasks(file);
    const rows = ALL_SIDES.map((side) => {
      const trouble = sides.trouble(side);
      return {
        side,
        versions: sideVersions(side),
        tally: tallies.get(side) ?? emptyTally(),
        extraSkips: isReferenceColumn(side) ? standalone.length : 0,
        ...(trouble === undefined ? {} : { trouble }),
      };
    });
    console.log(`\n${formatSummary(rows, cases.length, standalone.length)}\n`);
  } finally {
    await sides.stopAll(); // Nothing is left running, whatever failed.
  }
}, STOP_TIMEOUT_MS);

describe('the catalogue', () => {
  it('holds at least 150 cases, each of which runs on some side', () => {
    expect(cases.length).toBeGreaterThanOrEqual(150);
    const nowhere = cases
      .filter((item) => SIDE_NAMES.every((side) => skipReason(item, side) !== null))
      .map((item) => item.id);
    expect(nowhere).toEqual([]);
  });
});

for (const side of OUR_SIDES) describeSide(`catalogue on ${side}`, side, referenced, partnerOutcome);
describe('catalogue without a reference (reference: false), on our sides only', () => {
  for (const side of OUR_SIDES) describeSide(`on ${side}`, side, standalone, standalonePartner);
});
for (const column of REFERENCE_COLUMNS)
  describeSide(`catalogue on reference column ${column}`, column, referenced, partnerOutcome);
