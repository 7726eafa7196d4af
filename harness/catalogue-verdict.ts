/**
 * How the catalogue spec judges one case on one side, as the matrix runner does
 * (harness/report/runner/judge.ts): against `expect` when the case has one; otherwise a reference
 * column or ours-remote is compared with ours, and ours with every reference column that runs the
 * case: the reference decides. Outcomes are compared whole; timing never takes part.
 */
import type { LoadedCase, Outcome, SideName } from './case-model.js';
import { judge } from './expect.js';
import { comparisonPartners } from './sides/side.js';

/** Another side's outcome of the same case; rejects when that side's harness broke. */
export type PartnerOutcome = (side: SideName, item: LoadedCase) => Promise<Outcome>;

/** `null` when the outcome is right for the case on this side, otherwise the readable report of why not. */
export async function verdictFor(
  item: LoadedCase,
  side: SideName,
  outcome: Outcome,
  partner: PartnerOutcome,
): Promise<string | null> {
  if (item.expect !== undefined) return judge(item, side, outcome);
  const partners = comparisonPartners(item, side);
  // With nobody to compare with, judge says so: a case must have an expect or a side that decides.
  if (partners.length === 0) return judge(item, side, outcome);
  const reports: string[] = [];
  for (const other of partners) {
    const report = judge(item, side, outcome, { side: other, outcome: await partner(other, item) });
    if (report !== null) reports.push(report);
  }
  return reports.length === 0 ? null : reports.join('\n\n');
}
