/**
 * The trivial execution every side must answer before its results count, for the catalogue spec
 * and the matrix runner alike: a side that cannot give 42 is broken harness, not a set of results.
 */
import type { Case, Outcome } from './case-model.js';
import { brief, checkExpectation } from './expect.js';

export const PREFLIGHT_CASE: Case = {
  id: 'preflight',
  description: 'The side answers a trivial execution',
  features: [],
  code: 'async () => 6 * 7',
  expect: { result: 42 },
};

export function formatPreflightFailed(side: string, got: string): string {
  return `The ${side} side started, but a trivial execution (async () => 6 * 7) did not give 42: ${got}`;
}

/** Why an outcome is not what a healthy side gives for the preflight (the failure text), or undefined. */
export function preflightProblem(side: string, outcome: Outcome): string | undefined {
  return checkExpectation(PREFLIGHT_CASE.expect!, outcome).length > 0
    ? formatPreflightFailed(side, brief(outcome))
    : undefined;
}
