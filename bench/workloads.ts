/**
 * The workloads every side runs (ours in process, ours over a daemon, the reference under
 * wrangler dev). Tools are declared the way cases declare them and materialized with the
 * harness's `tools.ts`, which the reference worker bundles too, so both sides call the same
 * tool functions.
 */
import type { CaseProvider } from '../harness/case-model.js';

export interface Workload {
  name: 'trivial' | 'tools10' | 'waits3';
  /** How the tables name it. */
  label: string;
  /** Dialect code: one arrow expression. */
  code: string;
  providers: CaseProvider[];
  /** The result every side must produce; anything else stops the benchmark. */
  expect: unknown;
  toolCalls: number;
}

const TRIVIAL = {
  name: 'trivial',
  label: 'trivial execution',
  code: 'async () => 42',
  providers: [],
  expect: 42,
  toolCalls: 0,
} satisfies Workload;

/** `count` answers how often it was called in this execution, so ten sequential calls return 10. */
const TEN_TOOL_CALLS = {
  name: 'tools10',
  label: 'ten sequential tool calls',
  code: 'async () => { let n = 0; for (let i = 0; i < 10; i++) n = await api.inc({}); return n }',
  providers: [{ name: 'api', tools: { inc: { count: true } } }],
  expect: 10,
  toolCalls: 10,
} satisfies Workload;

/** The workloads of the interleaved rounds, one execution at a time. */
export const WORKLOADS = [TRIVIAL, TEN_TOOL_CALLS] as const;
export type RoundWorkloadName = (typeof WORKLOADS)[number]['name'];

/** What one program of the load phase costs the ideal executor: its tool calls, one after another. */
export const WAIT_TOOL_MS = 200;

/**
 * The load phase's program, an agent's in miniature: three sequential tool calls that each answer
 * after 200 ms (the harness's `delay`, then `count`), so it returns 3 and ideally takes 600 ms.
 */
export const THREE_WAITS: Workload = {
  name: 'waits3',
  label: 'three sequential 200 ms tool calls',
  code: 'async () => { let n = 0; for (let i = 0; i < 3; i++) n = await api.wait({}); return n }',
  providers: [
    {
      name: 'api',
      // biome-ignore lint/suspicious/noThenProperty: the harness's `delay` behaviour names what follows it `then` (case-model.ts).
      tools: { wait: { delay: WAIT_TOOL_MS, then: { count: true } } },
    },
  ],
  expect: 3,
  toolCalls: 3,
};

/** The trivial execution, for the throughput figure of the load phase. */
export const TRIVIAL_WORKLOAD: Workload = TRIVIAL;

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
