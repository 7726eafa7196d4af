/**
 * The sides the catalogue spec runs on, for the whole spec file: each started once (several at a
 * time, bounded), checked with a trivial execution, and stopped at the end. Each case runs once per
 * side, memoized, so a comparison partner's outcome and that partner's own test are the same run.
 *
 * Starting never rejects as a whole: each side settles on its own, so one column that cannot start
 * fails its own describe (with its output), not the others. A side that breaks mid-run fails the
 * remaining cases at once with the reason, instead of making each wait out its own deadline.
 */

import { messageOf } from '../src/protocol/errors.js';
import type { Case, Outcome, SideName } from './case-model.js';
import { sideBroke, sideDidNotStart, troubleLine, withOutput } from './catalogue-messages.js';
import { formatPreflightFailed, PREFLIGHT_CASE, preflightProblem } from './preflight.js';
import type { Side } from './sides/index.js';

/** A side as started; a reference column also offers what wrangler printed. */
export type StartedSide = Side & { output?(): string };
export type SideStarter = (name: SideName) => Promise<StartedSide>;

/** How much of wrangler's output a failure quotes. */
const OUTPUT_TAIL = 4 * 1024;

interface Entry {
  /** Settles (never rejects) once the side is started and checked, or known not to start; set on the first start. */
  starting?: Promise<void>;
  side?: StartedSide;
  /** Why the side did not start. */
  failure?: string;
  /** Where and why the side stopped answering during the run. */
  broken?: { caseId: string; why: string };
  outcomes: Map<string, Promise<Outcome>>;
}

export class CatalogueSides {
  private readonly entries = new Map<SideName, Entry>();

  constructor(private readonly starter: SideStarter) {}

  /** Starts the named sides not started yet, at most `parallelism` at once; resolves when all have settled. */
  async startAll(names: readonly SideName[], parallelism: number): Promise<void> {
    const queue = [...new Set(names)];
    const lane = async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) await this.start(name);
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(parallelism, queue.length)) }, lane));
  }

  /** The started side; throws why it did not start (with its output). */
  async ready(name: SideName): Promise<StartedSide> {
    await this.start(name);
    const entry = this.entries.get(name)!;
    if (entry.failure !== undefined) throw new Error(sideDidNotStart(name, entry.failure));
    return entry.side!;
  }

  /** One line on why the side did not start or broke during the run; undefined while it is healthy (or never asked for). */
  trouble(name: SideName): string | undefined {
    const entry = this.entries.get(name);
    if (entry?.failure !== undefined) return troubleLine(name, 'did not start', entry.failure);
    if (entry?.broken !== undefined)
      return troubleLine(name, `broke during the run, at case "${entry.broken.caseId}"`, entry.broken.why);
    return undefined;
  }

  /** The case's normalized outcome on a side, run once. Rejects only when the harness broke. */
  outcome(name: SideName, item: Case): Promise<Outcome> {
    const entry = this.entries.get(name);
    const known = entry?.outcomes.get(item.id);
    if (known) return known;
    const running = this.run(name, item);
    this.entryOf(name).outcomes.set(item.id, running);
    // An infrastructure failure is not an outcome: a later caller gets the side's state, not a stale rejection.
    running.catch(() => this.entryOf(name).outcomes.delete(item.id));
    return running;
  }

  /** Stops every side that started (waiting for starts still under way); the first failure is rethrown. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.entries.values()].map((entry) => entry.starting));
    const results = await Promise.allSettled([...this.entries.values()].map((entry) => entry.side?.dispose()));
    this.entries.clear();
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private entryOf(name: SideName): Entry {
    let entry = this.entries.get(name);
    if (!entry) {
      entry = { outcomes: new Map() };
      this.entries.set(name, entry);
    }
    return entry;
  }

  private start(name: SideName): Promise<void> {
    const entry = this.entryOf(name);
    entry.starting ??= (async () => {
      let side: StartedSide;
      try {
        side = await this.starter(name);
      } catch (error) {
        entry.failure = messageOf(error);
        return;
      }
      entry.side = side;
      const problem = await this.preflight(side);
      if (problem !== undefined) {
        entry.failure = problem;
        delete entry.side;
        await side.dispose().catch(() => undefined); // The failure above is the news.
      }
    })();
    return entry.starting;
  }

  /** Why the side does not answer the trivial execution correctly, or undefined when it does. */
  private async preflight(side: StartedSide): Promise<string | undefined> {
    let problem: string | undefined;
    try {
      problem = preflightProblem(side.name, await side.run(PREFLIGHT_CASE));
    } catch (error) {
      problem = formatPreflightFailed(side.name, messageOf(error));
    }
    return problem === undefined ? undefined : withOutput(problem, side.output?.().slice(-OUTPUT_TAIL) ?? '');
  }

  private async run(name: SideName, item: Case): Promise<Outcome> {
    const side = await this.ready(name);
    const entry = this.entryOf(name);
    if (entry.broken !== undefined) throw new Error(sideBroke(name, entry.broken.caseId, entry.broken.why));
    try {
      return await side.run(item);
    } catch (error) {
      // One failed request may be the case's own doing; a side that no longer answers 6 * 7 is broken.
      const problem = await this.preflight(side);
      if (problem !== undefined) entry.broken ??= { caseId: item.id, why: `${messageOf(error)}\n${problem}` };
      throw error;
    }
  }
}
