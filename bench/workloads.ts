/**
 * The workloads every side runs (ours in process, ours over a daemon, the reference under
 * wrangler dev). Tools are declared the way cases declare them and materialized with the
 * harness's `tools.ts`, which the reference worker bundles too, so both sides call the same
 * tool functions.
 */
import type { CaseProvider } from '../harness/case-model.js';

export interface Workload {
  name: 'trivial' | 'tools10';
  /** How the tables name it. */
  label: string;
  /** Dialect code: one arrow expression. */
  code: string;
  providers: CaseProvider[];
  /** The result every side must produce; anything else stops the benchmark. */
  expect: unknown;
  toolCalls: number;
}

const TRIVIAL: Workload = {
  name: 'trivial',
  label: 'trivial execution',
  code: 'async () => 42',
  providers: [],
  expect: 42,
  toolCalls: 0,
};

/** `count` answers how often it was called in this execution, so ten sequential calls return 10. */
const TEN_TOOL_CALLS: Workload = {
  name: 'tools10',
  label: 'ten sequential tool calls',
  code: 'async () => { let n = 0; for (let i = 0; i < 10; i++) n = await api.inc({}); return n }',
  providers: [{ name: 'api', tools: { inc: { count: true } } }],
  expect: 10,
  toolCalls: 10,
};

export const WORKLOADS: readonly Workload[] = [TRIVIAL, TEN_TOOL_CALLS];

function wrongOutcome(side: string, workload: Workload, outcome: unknown): string {
  return `${side} returned ${JSON.stringify(outcome)} for the ${workload.label} (expected result ${JSON.stringify(workload.expect)}); the benchmark stops rather than time a broken run`;
}

/** Throws unless the outcome is exactly the workload's result, with no error. */
export function checkOutcome(
  side: string,
  workload: Workload,
  outcome: { result?: unknown; error?: unknown; threw?: string },
): void {
  if (outcome.error !== undefined || outcome.threw !== undefined || outcome.result !== workload.expect) {
    throw new Error(wrongOutcome(side, workload, outcome));
  }
}
