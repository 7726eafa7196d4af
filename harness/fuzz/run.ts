/**
 * One fuzz run: the seed's programs, each run on ours and on a reference column through the
 * harness's engine (the same sides, guards and retries as the matrix), their outcomes compared by
 * the harness's rules. A difference a catalogue case documents is counted as known; one whose
 * program involves time is run again, and counted as flaky when the second run agrees. Each new
 * kind of difference is then shrunk by fast-check (replaying the same seed, so it finds the same
 * first program) and written as a draft case. Node-only.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { LoadedCase, Outcome } from '../case-model.js';
import type { ColumnId } from '../columns.js';
import { type CellResult, Engine, type SideStarter } from '../engine.js';
import { formatMismatches, type Mismatch } from '../expect.js';
import { loadCatalogue } from '../load-cases.js';
import { startSide } from '../sides.js';
import { compareOutcomes, differenceSignature } from './compare.js';
import { type DraftOrigin, writeDraft } from './drafts.js';
import {
  HELPER_MODULE,
  involvesTiming,
  type Program,
  programArbitrary,
  programFeatures,
  programOutbound,
  programProviders,
  renderProgram,
  samplePrograms,
  usesModules,
} from './generator.js';
import { knownDifference } from './known.js';
import { fuzzTexts } from './texts.js';

/** Programs in flight at once: both columns' lanes stay busy while one program settles. */
const IN_FLIGHT = 4;
/** The share of a budget the first pass may use; shrinking has the rest. */
const FIRST_PASS_SHARE = 0.75;
/** Candidates fast-check may run while shrinking one difference, so a run stays bounded. */
const SHRINK_RUNS = 200;

export interface FuzzOptions {
  seed: number;
  count: number;
  /** The reference column ours is compared with. */
  column: ColumnId;
  /** Stop starting programs (and shrinking) after this long. */
  budgetSeconds?: number;
  /** Where drafts are written. */
  draftsDir: string;
  /** Starts a column; a test passes one that plants a difference in ours. */
  starter?: SideStarter;
  print?: (line: string) => void;
  /** Given the engine once it exists, so a command can stop it on Ctrl-C (cli/common.ts). */
  onEngine?: (engine: Engine) => void;
  /** For tests: fewer shrink candidates. */
  shrinkRuns?: number;
}

type PairResult =
  | { kind: 'same' }
  | { kind: 'known'; caseId: string }
  | { kind: 'flaky'; signature: string }
  | { kind: 'new'; signature: string; mismatches: Mismatch[]; ours: Outcome; reference: Outcome }
  | { kind: 'not-run'; reason: string };

interface FuzzDifference {
  signature: string;
  /** The first program (0-based, in the seed's order) that differed this way. */
  index: number;
  /** The draft's file, relative to the working directory. */
  draft: string;
  /** Whether the draft file is new in this run. */
  isNew: boolean;
  /** Lines of the shrunk program. */
  lines: number;
  diff: string;
}

/** What a run found: the summary line's figures, and the report's section. */
export interface FuzzSummary {
  seed: number;
  column: ColumnId;
  asked: number;
  ran: number;
  same: number;
  known: Record<string, number>;
  /** Per documented difference, the first program (0-based) that showed it. */
  knownFirstAt: Record<string, number>;
  flaky: number;
  notRun: number;
  differences: FuzzDifference[];
  shrinkRuns: number;
  durationMs: number;
  /** How long each side took for the first pass, running at its own pace: programs per minute. */
  busyMs: { ours: number; reference: number };
  /** How many programs each side ran in the first pass. */
  sidePrograms: { ours: number; reference: number };
  /** The budget ended the first pass before every program ran. */
  outOfBudget: boolean;
}

const keyOf = (program: Program) => JSON.stringify(program);
const caseIdOf = (program: Program) => `fuzz-${createHash('sha256').update(keyOf(program)).digest('hex').slice(0, 12)}`;

export function programCase(program: Program, id: string): LoadedCase {
  return {
    id,
    description: 'A generated program',
    features: programFeatures(program),
    code: renderProgram(program),
    providers: programProviders(program),
    options: {
      timeout: program.timeout,
      outbound: programOutbound(program),
      recordCalls: true,
      ...(usesModules(program) ? { modules: { 'helper.js': HELPER_MODULE } } : {}),
    },
    expect: { calls: { any: true } },
    timing: involvesTiming(program),
    file: 'fuzz',
    line: 0,
  };
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzSummary> {
  const print = options.print ?? ((line: string) => console.log(line));
  const started = Date.now();
  const deadline = options.budgetSeconds === undefined ? Infinity : started + options.budgetSeconds * 1000;
  const overBudget = () => Date.now() > deadline;
  // The first pass leaves a quarter of the budget to shrinking what it found.
  const firstPassDeadline = started + (deadline - started) * FIRST_PASS_SHARE;
  const engine = new Engine(loadCatalogue().boundaries, options.starter ?? startSide);
  options.onEngine?.(engine);
  const results = new Map<string, PairResult>();
  const busy = { ours: 0, reference: 0 };
  const summary: FuzzSummary = {
    seed: options.seed,
    column: options.column,
    asked: options.count,
    ran: 0,
    same: 0,
    known: {},
    knownFirstAt: {},
    flaky: 0,
    notRun: 0,
    differences: [],
    shrinkRuns: 0,
    durationMs: 0,
    busyMs: busy,
    sidePrograms: { ours: 0, reference: 0 },
    outOfBudget: false,
  };

  /** Ours and the reference's outcomes of one program, compared; `not-run` when a side gave none. */
  const judgePair = (code: string, ours: CellResult, reference: CellResult): PairResult => {
    if (!ours.outcome || !reference.outcome)
      return { kind: 'not-run', reason: (ours.outcome ? reference : ours).cell.reason ?? 'no outcome' };
    const oursOutcome = ours.outcome as Outcome;
    const referenceOutcome = reference.outcome as Outcome;
    const mismatches = compareOutcomes(oursOutcome, referenceOutcome);
    if (mismatches.length === 0) return { kind: 'same' };
    const caseId = knownDifference(oursOutcome, referenceOutcome, code);
    if (caseId !== undefined) return { kind: 'known', caseId };
    return {
      kind: 'new',
      signature: differenceSignature(mismatches, oursOutcome, referenceOutcome),
      mismatches,
      ours: oursOutcome,
      reference: referenceOutcome,
    };
  };

  /** A program whose first outcomes differ: a timing program runs once more, and is flaky when the second run does not differ the same way. */
  const confirm = async (program: Program, first: PairResult): Promise<PairResult> => {
    if (first.kind !== 'new' || !involvesTiming(program)) return first;
    const item = programCase(program, caseIdOf(program));
    const second = judgePair(
      item.code,
      ...(await Promise.all([engine.cell(item, 'ours'), engine.cell(item, options.column)])),
    );
    return second.kind === 'new' && second.signature === first.signature
      ? second
      : { kind: 'flaky', signature: first.signature };
  };

  /** One program on both columns at once (shrinking). */
  const evaluate = async (program: Program): Promise<PairResult> => {
    const item = programCase(program, caseIdOf(program));
    const first = judgePair(
      item.code,
      ...(await Promise.all([engine.cell(item, 'ours'), engine.cell(item, options.column)])),
    );
    return confirm(program, first);
  };

  const tally = (result: PairResult) => {
    if (result.kind === 'not-run') {
      summary.notRun += 1;
      return;
    }
    summary.ran += 1;
    if (result.kind === 'same') summary.same += 1;
    else if (result.kind === 'known') summary.known[result.caseId] = (summary.known[result.caseId] ?? 0) + 1;
    else if (result.kind === 'flaky') summary.flaky += 1;
  };

  try {
    const programs = samplePrograms(options.seed, options.count);
    const open = await engine.open('ours');
    if (open !== undefined) throw new Error(fuzzTexts.columnDidNotOpen('ours', open));
    const openReference = await engine.open(options.column);
    if (openReference !== undefined) throw new Error(fuzzTexts.columnDidNotOpen(options.column, openReference));

    // The first pass: each side runs the seed's programs at its own pace, a few in flight, until
    // the budget ends; so each side's time is its own, for the throughput figures.
    const cells = { ours: new Map<number, CellResult>(), reference: new Map<number, CellResult>() };
    const runSide = async (side: keyof typeof cells, column: ColumnId) => {
      const sideStart = Date.now();
      let next = 0;
      const worker = async () => {
        for (let index = next++; index < programs.length; index = next++) {
          if (Date.now() > firstPassDeadline || engine.isAborted) {
            summary.outOfBudget = true;
            return;
          }
          const program = programs[index]!;
          cells[side].set(index, await engine.cell(programCase(program, caseIdOf(program)), column));
          if (side === 'ours' && cells.ours.size % 50 === 0)
            print(fuzzTexts.progress(cells.ours.size, cells.reference.size, programs.length, Date.now() - started));
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
      busy[side] = Date.now() - sideStart;
      summary.sidePrograms[side] = cells[side].size;
    };
    await Promise.all([runSide('ours', 'ours'), runSide('reference', options.column)]);

    const firstNew = new Map<string, number>();
    for (const [index, program] of programs.entries()) {
      const ours = cells.ours.get(index);
      const reference = cells.reference.get(index);
      if (!ours || !reference) continue; // The budget ended before both sides ran it.
      const key = keyOf(program);
      let result = results.get(key);
      if (result === undefined) {
        result = await confirm(program, judgePair(renderProgram(program), ours, reference));
        results.set(key, result);
      }
      tally(result);
      if (result.kind === 'new' && !firstNew.has(result.signature)) firstNew.set(result.signature, index);
      if (result.kind === 'known' && !(result.caseId in summary.knownFirstAt))
        summary.knownFirstAt[result.caseId] = index;
    }

    // Each new kind of difference, shrunk from the first program that showed it.
    const targets = [...firstNew.entries()].sort((a, b) => a[1] - b[1]);
    for (const [signature, index] of targets) {
      const shrunk = await shrink(signature);
      const result = results.get(keyOf(shrunk))!;
      if (result.kind !== 'new') continue;
      const origin: DraftOrigin = { seed: options.seed, column: options.column, index, signature };
      const written = writeDraft(options.draftsDir, programCase(shrunk, 'draft'), shrunk, result, origin);
      const diff = formatMismatches(result.mismatches);
      summary.differences.push({ signature, index, ...written, lines: renderProgram(shrunk).split('\n').length, diff });
      print(fuzzTexts.difference(signature, index, written.draft, written.isNew, diff));
    }
  } finally {
    await engine.closeAll();
    summary.durationMs = Date.now() - started;
  }
  return summary;

  /**
   * fast-check replays the seed: the programs of the first pass are answered from memory, so the
   * first that fails is the first that showed this difference, and shrinking runs only candidates.
   * A candidate fails only when it differs the same way, and once the shrink budget or the run's
   * budget is spent every candidate passes, which ends the shrinking where it stands.
   */
  async function shrink(signature: string): Promise<Program> {
    let found = false;
    let runs = 0;
    const limit = options.shrinkRuns ?? SHRINK_RUNS;
    const property = fc.asyncProperty(programArbitrary, async (program) => {
      const key = keyOf(program);
      let result = results.get(key);
      if (!found) {
        if (result?.kind === 'new' && result.signature === signature) found = true;
        return !found;
      }
      if (result === undefined) {
        if (runs >= limit || overBudget() || engine.isAborted) return true;
        runs += 1;
        summary.shrinkRuns += 1;
        result = await evaluate(program);
        results.set(key, result);
      }
      return !(result.kind === 'new' && result.signature === signature);
    });
    const details = await fc.check(property, { seed: options.seed, numRuns: options.count });
    if (!details.failed || details.counterexample === null) throw new Error(fuzzTexts.notReplayed(signature));
    return details.counterexample[0];
  }
}
