/**
 * The one state machine of how a run ends (src/isolate/host/run/run-ending.ts), as a table. Every row
 * is written out here by hand, from the rules docs/isolate.md states: a row changed, added or
 * dropped in the table fails a test below. Every cell not listed must be refused (the state stays,
 * nothing is done), so the first ending wins.
 */
import { describe, expect, it } from 'vitest';
import {
  type EndingEvent,
  type EndingResult,
  type EndingState,
  type EndingStep,
  type ProcessFate,
  stepEnding,
} from '../../../../src/isolate/host/run/run-ending.js';

const STATES: EndingState[] = [
  'unstarted',
  'running',
  'givingUpAtTimeout',
  'givingUpAtCpu',
  'givingUpAbandoned',
  'ended',
];
const EVENTS: EndingEvent[] = [
  'start',
  'unserved',
  'requestTooLarge',
  'timeout',
  'programStart',
  'cpu',
  'cancel',
  'doneInTime',
  'doneAfterDeadline',
  'cancelled',
  'spinning',
  'heap',
  'memory',
  'output',
  'budget',
  'reclaim',
  'died',
  'diedAtMemoryLimit',
  'diedOutOfHeap',
  'dispose',
];

const settle = (result: EndingResult, process: ProcessFate): EndingStep => ({
  to: 'ended',
  verdict: { do: 'settle', result, process },
});

/** A cap ends the process at once and is reported as itself, whatever the run was doing. */
const CAPS: [EndingEvent, EndingStep][] = [
  ['heap', settle('OUT_OF_MEMORY', 'killed')],
  ['memory', settle('MEMORY_LIMIT', 'killed')],
  ['output', settle('OUTPUT_TOO_LARGE', 'killed')],
  ['budget', settle('MEMORY_BUDGET', 'killed')],
  ['reclaim', settle('TENANT_SHARE_RECLAIMED', 'killed')],
];

/** Once the run is given up, its process's death, whatever its cause, is reported as the bound. */
const deathsAt = (state: EndingState, result: EndingResult): [EndingState, EndingEvent, EndingStep][] => [
  [state, 'died', settle(result, 'dead')],
  [state, 'diedAtMemoryLimit', settle(result, 'dead')],
  [state, 'diedOutOfHeap', settle(result, 'dead')],
];

/** Every transition the table must accept; each is a test. */
const ACCEPTED: [EndingState, EndingEvent, EndingStep][] = [
  ['unstarted', 'start', { to: 'running', verdict: { do: 'start' } }],
  ['unstarted', 'unserved', settle('unserved', 'keep')],
  ['unstarted', 'cancel', settle('EXECUTION_CANCELLED', 'keep')],
  ['unstarted', 'budget', settle('MEMORY_BUDGET', 'killed')],
  ['unstarted', 'reclaim', settle('TENANT_SHARE_RECLAIMED', 'killed')],
  ['unstarted', 'dispose', settle('disposed', 'keep')],

  ['running', 'requestTooLarge', settle('REQUEST_TOO_LARGE', 'keep')],
  ['running', 'programStart', settle('PROGRAM_START_TIMEOUT', 'killed')],
  ['running', 'timeout', { to: 'givingUpAtTimeout', verdict: { do: 'giveUp', raceMayWin: true } }],
  ['running', 'cpu', { to: 'givingUpAtCpu', verdict: { do: 'giveUp', raceMayWin: false } }],
  ['running', 'cancel', { to: 'givingUpAbandoned', verdict: { do: 'abandon', giveUp: true } }],
  ['running', 'doneInTime', settle('outcome', 'keep')],
  ['running', 'doneAfterDeadline', settle('outcome', 'keep')],
  ...CAPS.map(([event, step]): [EndingState, EndingEvent, EndingStep] => ['running', event, step]),
  ['running', 'died', settle('PROCESS_ENDED', 'dead')],
  ['running', 'diedAtMemoryLimit', settle('MEMORY_LIMIT', 'dead')],
  ['running', 'diedOutOfHeap', settle('OUT_OF_MEMORY', 'dead')],
  ['running', 'dispose', settle('disposed', 'keep')],

  ['givingUpAtTimeout', 'cancel', { to: 'givingUpAbandoned', verdict: { do: 'abandon', giveUp: false } }],
  ['givingUpAtTimeout', 'doneInTime', settle('outcome', 'keep')],
  ['givingUpAtTimeout', 'doneAfterDeadline', settle('EXECUTION_TIMEOUT', 'retire')],
  ['givingUpAtTimeout', 'cancelled', settle('EXECUTION_TIMEOUT', 'retire')],
  ['givingUpAtTimeout', 'spinning', settle('EXECUTION_TIMEOUT', 'kill')],
  ...CAPS.map(([event, step]): [EndingState, EndingEvent, EndingStep] => ['givingUpAtTimeout', event, step]),
  ...deathsAt('givingUpAtTimeout', 'EXECUTION_TIMEOUT'),
  ['givingUpAtTimeout', 'dispose', settle('disposed', 'keep')],

  ['givingUpAtCpu', 'cancel', { to: 'givingUpAbandoned', verdict: { do: 'abandon', giveUp: false } }],
  ['givingUpAtCpu', 'doneInTime', settle('CPU_TIMEOUT', 'retire')],
  ['givingUpAtCpu', 'doneAfterDeadline', settle('CPU_TIMEOUT', 'retire')],
  ['givingUpAtCpu', 'cancelled', settle('CPU_TIMEOUT', 'retire')],
  ['givingUpAtCpu', 'spinning', settle('CPU_TIMEOUT', 'kill')],
  ...CAPS.map(([event, step]): [EndingState, EndingEvent, EndingStep] => ['givingUpAtCpu', event, step]),
  ...deathsAt('givingUpAtCpu', 'CPU_TIMEOUT'),
  ['givingUpAtCpu', 'dispose', settle('disposed', 'keep')],

  ['givingUpAbandoned', 'doneInTime', settle('EXECUTION_CANCELLED', 'retire')],
  ['givingUpAbandoned', 'doneAfterDeadline', settle('EXECUTION_CANCELLED', 'retire')],
  ['givingUpAbandoned', 'cancelled', settle('EXECUTION_CANCELLED', 'retire')],
  ['givingUpAbandoned', 'spinning', settle('EXECUTION_CANCELLED', 'kill')],
  ...CAPS.map(([event, step]): [EndingState, EndingEvent, EndingStep] => ['givingUpAbandoned', event, step]),
  ...deathsAt('givingUpAbandoned', 'EXECUTION_CANCELLED'),
  ['givingUpAbandoned', 'dispose', settle('disposed', 'keep')],
];

const accepted = new Set(ACCEPTED.map(([state, event]) => `${state} ${event}`));
const REFUSED = STATES.flatMap((state) =>
  EVENTS.filter((event) => !accepted.has(`${state} ${event}`)).map((event): [EndingState, EndingEvent] => [
    state,
    event,
  ]),
);

/** The steps a sequence of events takes from `unstarted`. */
function walk(events: EndingEvent[]): EndingStep[] {
  let state: EndingState = 'unstarted';
  return events.map((event) => {
    const step = stepEnding(state, event);
    state = step.to;
    return step;
  });
}

describe('the ending table', () => {
  it.each(ACCEPTED)('%s, on %s, goes to the listed state with the listed verdict', (state, event, step) => {
    expect(stepEnding(state, event)).toEqual(step);
  });

  it.each(REFUSED)('%s refuses %s: the state stays, and nothing is done', (state, event) => {
    expect(stepEnding(state, event)).toEqual({ to: state, verdict: { do: 'nothing' } });
  });

  it('refuses every event once the run has ended: the first ending wins', () => {
    for (const event of EVENTS) expect(stepEnding('ended', event)).toEqual({ to: 'ended', verdict: { do: 'nothing' } });
  });

  it('gives a run up once: a second bound, or a cancel after one, sends no second cancel', () => {
    const steps = walk(['start', 'timeout', 'cpu', 'timeout', 'cancel', 'cancel']);
    expect(steps.map((step) => step.verdict)).toEqual([
      { do: 'start' },
      { do: 'giveUp', raceMayWin: true },
      { do: 'nothing' },
      { do: 'nothing' },
      { do: 'abandon', giveUp: false },
      { do: 'nothing' },
    ]);
  });

  it('answers a caller that went away at once, in every state where its run is not over, and only once', () => {
    for (const state of STATES.filter((state) => state !== 'ended' && state !== 'givingUpAbandoned')) {
      const { verdict } = stepEnding(state, 'cancel');
      const answered =
        verdict.do === 'abandon' || (verdict.do === 'settle' && verdict.result === 'EXECUTION_CANCELLED');
      expect(answered, state).toBe(true);
    }
    expect(stepEnding('givingUpAbandoned', 'cancel').verdict).toEqual({ do: 'nothing' });
  });

  it('lets the race win at the wall-clock bound, but not once the caller has gone away too', () => {
    expect(walk(['start', 'timeout', 'doneInTime']).at(-1)).toEqual(settle('outcome', 'keep'));
    expect(walk(['start', 'timeout', 'cancel', 'doneInTime']).at(-1)).toEqual(settle('EXECUTION_CANCELLED', 'retire'));
  });

  it('keeps the bound that ended the run while its caller waits: the CPU bound, unless the caller goes away first', () => {
    expect(walk(['start', 'cpu', 'cancelled']).at(-1)).toEqual(settle('CPU_TIMEOUT', 'retire'));
    expect(walk(['start', 'cpu', 'cancel', 'cancelled']).at(-1)).toEqual(settle('EXECUTION_CANCELLED', 'retire'));
  });

  it('refuses a `cancelled` while nothing has given the run up', () => {
    expect(walk(['start', 'cancelled']).at(-1)).toEqual({ to: 'running', verdict: { do: 'nothing' } });
  });

  it('settles once: the death that follows a cap, or a reply that follows the spin, is refused', () => {
    expect(walk(['start', 'heap', 'died']).map((step) => step.verdict)).toEqual([
      { do: 'start' },
      { do: 'settle', result: 'OUT_OF_MEMORY', process: 'killed' },
      { do: 'nothing' },
    ]);
    expect(walk(['start', 'cancel', 'spinning', 'cancelled', 'doneInTime']).slice(2)).toEqual([
      settle('EXECUTION_CANCELLED', 'kill'),
      { to: 'ended', verdict: { do: 'nothing' } },
      { to: 'ended', verdict: { do: 'nothing' } },
    ]);
  });
});
