/** One POST to a running reference worker. Infrastructure failures throw; the case's outcome never does. */

import { messageOf } from '../../src/protocol/index.js';
import type { Outcome } from '../case-model.js';
import { columnRequestFailed, columnRequestTimedOut, columnUnreachable } from './messages.js';
import type { ReferenceRequest } from './wire.js';

/** The longest default timeout of any release (upstream-releases.md §8). */
const LONGEST_DEFAULT_TIMEOUT_MS = 60_000;
/** Room for loading the dynamic worker and the round trip, beyond the in-sandbox timeout. */
const ANSWER_GRACE_MS = 30_000;

/** How long to wait for an answer: the case's own bound, plus grace. */
function answerDeadlineMs(request: ReferenceRequest): number {
  return (request.timeout ?? LONGEST_DEFAULT_TIMEOUT_MS) + ANSWER_GRACE_MS;
}

export async function postReferenceRequest(column: string, url: string, request: ReferenceRequest): Promise<Outcome> {
  const deadline = answerDeadlineMs(request);
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(deadline),
    });
  } catch (error) {
    if (error instanceof Error && error.name === 'TimeoutError')
      throw new Error(columnRequestTimedOut(column, request.caseId, deadline));
    throw new Error(columnUnreachable(column, request.caseId, messageOf(error)));
  }
  const text = await response.text();
  if (response.status !== 200) throw new Error(columnRequestFailed(column, request.caseId, response.status, text));
  return JSON.parse(text) as Outcome;
}
