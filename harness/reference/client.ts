/** `runOnReference`: one case on one running reference column, as a normalized outcome. */
import type { Case, Outcome } from '../case-model.js';
import { describeRequest } from './describe-request.js';
import type { StartedReferenceColumn } from './wrangler.js';

/**
 * Refuses (throws, naming the case) what the reference wire cannot represent, before anything is
 * sent. Rejects on infrastructure failure; the case's own outcome, a `threw` included, resolves.
 */
export function runOnReference(column: StartedReferenceColumn, testCase: Case): Promise<Outcome> {
  let request;
  try {
    request = describeRequest(testCase);
  } catch (error) {
    return Promise.reject(error);
  }
  return column.run(request);
}
