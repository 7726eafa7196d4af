/**
 * Runs a runtime flow on any column and judges it. A column gives a `FlowSession` (make one
 * call on its runtime host, restart the host); this driver walks the steps, turns execution
 * labels into ids before a call and ids back into labels after it, blanks times, and compares
 * each step with its expectation by the rules of expect.ts. Runtime-neutral.
 */

import { type Mismatch, matchValue } from './expect.js';
import type { HostStepRequest } from './flow-host.js';
import type { Flow, FlowCall, FlowOutcome, FlowStep, StepExpectation, StepOutcome } from './flow-model.js';

/** What a column gives a flow: its runtime host, with state that starts empty. */
export interface FlowSession {
  step(request: HostStepRequest): Promise<StepOutcome>;
  /** Closes the state and reopens it: nothing in memory survives, everything durable does. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Upstream's execution ids: `exec_<16-digit epoch ms>_<uuid>`. */
const EXECUTION_ID = /exec_\d{16}_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIME_KEYS = new Set(['createdAt', 'updatedAt', 'savedAt']);

/** The labels of one flow run, both ways. */
class Labels {
  private readonly ids = new Map<string, string>();
  private readonly names = new Map<string, string>();
  private unnamed = 0;

  name(label: string, id: string): void {
    this.ids.set(label, id);
    this.names.set(id, label);
  }

  /** A label the flow gave, as its id; any other text passes as it is (a missing id, on purpose). */
  id(label: string): string {
    return this.ids.get(label) ?? label;
  }

  /** Every id in every string of `value` as `<label>`; times as `<time>`. */
  normalize(value: unknown): unknown {
    if (typeof value === 'string')
      return value.replace(EXECUTION_ID, (id) => {
        let label = this.names.get(id);
        if (label === undefined) this.name((label = `unnamed-${++this.unnamed}`), id);
        return `<${label}>`;
      });
    if (Array.isArray(value)) return value.map((item) => this.normalize(item));
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(
        Object.entries(value).map(([key, nested]) => [
          key,
          TIME_KEYS.has(key) && typeof nested === 'number' ? '<time>' : this.normalize(nested),
        ]),
      );
    return value;
  }
}

/** The call with every execution label replaced by its id. */
function resolve(call: FlowCall, labels: Labels): FlowCall {
  const resolved: Record<string, unknown> = { ...call };
  for (const key of ['approve', 'reject', 'rollback', 'deleteExecution', 'from'] as const)
    if (typeof resolved[key] === 'string') resolved[key] = labels.id(resolved[key] as string);
  if (typeof resolved.pending === 'string') resolved.pending = labels.id(resolved.pending);
  if ('concurrent' in call) resolved.concurrent = call.concurrent.map((inner) => resolve(inner, labels));
  return resolved as unknown as FlowCall;
}

/** Names the executions a call started: `as`, or `#<n>` for the n-th started in the flow. */
function nameStarted(call: FlowCall, value: unknown, labels: Labels, counter: { started: number }): void {
  const calls: Array<[FlowCall, unknown]> =
    'concurrent' in call
      ? call.concurrent.map((inner, index) => [inner, (value as Array<{ value?: unknown }>)[index]?.value])
      : [[call, value]];
  for (const [inner, outcome] of calls) {
    if (!('execute' in inner) && !('run' in inner)) continue;
    counter.started += 1;
    const id = (outcome as { executionId?: unknown } | undefined)?.executionId;
    if (typeof id === 'string' && id !== '') labels.name(inner.as ?? `#${counter.started}`, id);
  }
}

function stepCall(step: FlowStep): FlowCall {
  const { expect: _expect, ...call } = step;
  return call as FlowCall;
}

/** Runs every step on the session, in order; the session is closed after, whatever happened. */
export async function runFlow(
  flow: Flow,
  session: FlowSession,
  modules?: HostStepRequest['modules'],
): Promise<FlowOutcome> {
  const labels = new Labels();
  const counter = { started: 0 };
  const steps: StepOutcome[] = [];
  try {
    for (const step of flow.steps) {
      const call = stepCall(step);
      if ('restart' in call) {
        await session.restart();
        steps.push({ ran: [] });
        continue;
      }
      if ('wait' in call) {
        await new Promise((done) => setTimeout(done, call.wait));
        steps.push({ ran: [] });
        continue;
      }
      const request: HostStepRequest = { connectors: flow.connectors, call: resolve(call, labels) };
      if (flow.runtime !== undefined) request.runtime = flow.runtime;
      if (modules !== undefined) request.modules = modules;
      const outcome = await session.step(request);
      nameStarted(call, outcome.value, labels, counter);
      steps.push(labels.normalize(outcome) as StepOutcome);
    }
  } finally {
    await session.close();
  }
  return { steps };
}

const ABSENT = { absent: true } as const;

/** An expected value with `calls` left out of every runtime outcome in it (`{status, executionId, ...}`). */
function withoutOutcomeCalls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutOutcomeCalls);
  if (value === null || typeof value !== 'object') return value;
  const isOutcome = 'status' in value && 'executionId' in value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !(isOutcome && key === 'calls'))
      .map(([key, nested]) => [key, withoutOutcomeCalls(nested)]),
  );
}

/**
 * Each step against its expectation: `value` and `threw` left out must be absent, `ran` left out
 * must be empty, so a tool that ran when it should not have fails the step. `withoutCalls` judges
 * a release whose outcomes do not echo the call log yet. The steps may be a skip entry's, which
 * carry their expectations alone.
 */
export function checkFlow(
  flow: { steps: readonly { expect: StepExpectation }[] },
  outcome: FlowOutcome,
  { withoutCalls = false }: { withoutCalls?: boolean } = {},
): Mismatch[] {
  const out: Mismatch[] = [];
  if (outcome.steps.length !== flow.steps.length)
    out.push({ path: 'steps', expected: `${flow.steps.length} steps`, actual: `${outcome.steps.length} steps` });
  flow.steps.forEach((step, index) => {
    const actual = outcome.steps[index];
    if (actual === undefined) return;
    const { expect } = step;
    const at = `steps[${index}]`;
    const value = withoutCalls ? withoutOutcomeCalls(expect.value) : expect.value;
    matchValue('value' in expect ? value : ABSENT, actual.value, `${at}.value`, out);
    matchValue('threw' in expect ? expect.threw : ABSENT, actual.threw, `${at}.threw`, out);
    matchValue(expect.ran ?? [], actual.ran, `${at}.ran`, out);
  });
  return out;
}
