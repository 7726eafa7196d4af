/**
 * What parsing options costs a call, in ns per call: a request's checks (the executor's and the
 * daemon's wire checks), the per-call options (`record`, the event options) and the constructors'
 * (`CodemodeExecutor`, `replay`), each parsed many times in a tight loop after a warm-up.
 * `npx tsx bench/option-parse.ts`; docs/benchmarks.md ("What an option parse costs") has the
 * figures before and after the option schemas.
 */
import { resolveCodemodeOptions } from '../src/codemode/options.js';
import { resolveEventOptions } from '../src/events/options.js';
import { checkExecuteRequest, checkInvokeRequest } from '../src/isolate/host/executor/requests.js';
import { resolveSettings } from '../src/isolate/host/options/resolve.js';
import { resolveRecordOptions } from '../src/record/record-options.js';
import { resolveReplayOptions } from '../src/record/replay-options.js';
import { checkInvokeHandleRequest, checkWireExecuteRequest } from '../src/server/calls/wire-checks.js';
import { summarize } from './stats.js';

const CALLS = 200_000;
const ROUNDS = 7;

const onRecord = () => {};
const onEvent = () => {};
const executor = { execute: async () => ({}), dispose: async () => {} };
const settings = resolveSettings({});
const dispatch = async () => ({});
const cases: [string, () => unknown][] = [
  [
    'execute request checks {code, providers, dispatch, timeout, countHostWaits, tenant}',
    () =>
      checkExecuteRequest(
        { code: 'async () => 1', providers: [], dispatch, timeout: 5000, countHostWaits: true, tenant: 't' },
        settings,
      ),
  ],
  [
    'invokeHandle request checks {executionId, handle, timeout: null}',
    () => checkInvokeRequest({ executionId: 'e', handle: 'h', timeout: null }, settings),
  ],
  [
    'wire execute checks {code, dispatch, outboundMode, timeout, countHostWaits}',
    () =>
      checkWireExecuteRequest({
        code: 'async () => 1',
        dispatch,
        outboundMode: 'default',
        timeout: 5000,
        countHostWaits: true,
      }),
  ],
  [
    'wire invokeHandle checks {executionId, handle, dispatch, timeout}',
    () => checkInvokeHandleRequest({ executionId: 'e', handle: 'h', dispatch: null, timeout: 5000 }),
  ],
  ['record: {maxBytes, onRecord}', () => resolveRecordOptions({ maxBytes: 4096, onRecord })],
  ['record: true', () => resolveRecordOptions(true)],
  [
    'call events {onEvent, maxQueuedEvents}',
    () => resolveEventOptions('execute', { onEvent, maxQueuedEvents: 10, timeout: 5 }),
  ],
  ['call without events {timeout}', () => resolveEventOptions('execute', { timeout: 5 })],
  ['replay options {executor, timeout}', () => resolveReplayOptions({ executor, timeout: 1000 }, () => undefined)],
  ['CodemodeExecutor options {maxCodeBytes}', () => resolveCodemodeOptions({ maxCodeBytes: 1000 })],
];

let sink: unknown;
for (const [name, parse] of cases) {
  const perCall: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const start = process.hrtime.bigint();
    for (let call = 0; call < CALLS; call += 1) sink = parse();
    perCall.push(Number(process.hrtime.bigint() - start) / CALLS);
  }
  // The first round warms the JIT; the rest are the figure.
  const { min, p50 } = summarize(perCall.slice(1));
  console.log(`${name}: ${p50.toFixed(0)} ns per call (p50 of ${ROUNDS - 1} rounds; min ${min.toFixed(0)})`);
}
if (sink === Symbol.for('never')) console.log(sink);
