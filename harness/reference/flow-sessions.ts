/**
 * Runtime flows on a `wrangler dev` host: a session is one Durable Object (named afresh per flow
 * run, so its state starts empty), each call one POST to `/flow`, a restart one POST to
 * `/flow/restart`. The reference columns from 0.4.0 on open sessions this way (wrangler.ts), and
 * so does the `ours-worker` column (flow-sides.ts). Node-only.
 */
import { randomUUID } from 'node:crypto';
import { messageOf } from '../../src/protocol/index.js';
import type { Flow, StepOutcome } from '../flow-model.js';
import type { FlowSession } from '../flows.js';
import { texts } from '../texts.js';
import type { FlowPost } from './flow-host-object.js';

/** One call: loading the dynamic worker, a snippet's nested run, and a busy machine. */
const CALL_DEADLINE_MS = 90_000;

async function post(column: string, url: string, body: FlowPost | { session: string }): Promise<Response> {
  try {
    return await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(CALL_DEADLINE_MS),
    });
  } catch (error) {
    throw new Error(texts.reference.unreachable(column, body.session, messageOf(error)));
  }
}

/** Opens flow sessions on a running host at `url`. */
export function flowSessions(column: string, url: string, daemon?: string): (flow: Flow) => Promise<FlowSession> {
  return async (flow) => {
    const session = `${flow.id}-${randomUUID()}`;
    return {
      async step(request) {
        const response = await post(column, `${url}/flow`, {
          session,
          request,
          ...(daemon === undefined ? {} : { daemon }),
        });
        const text = await response.text();
        if (response.status !== 200) throw new Error(texts.flow.stepFailed(column, session, response.status, text));
        return JSON.parse(text) as StepOutcome;
      },
      async restart() {
        const response = await post(column, `${url}/flow/restart`, { session });
        if (response.status !== 200)
          throw new Error(texts.flow.notRestarted(session, response.status, await response.text()));
      },
      close: async () => {},
    };
  };
}
