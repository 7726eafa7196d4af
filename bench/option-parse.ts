/**
 * What parsing options costs a call, in ns per call: the per-call options (`record`, the event
 * options) and the constructors' (`CodemodeExecutor`, `replay`), each parsed many times in a tight loop after a warm-up.
 * `npx tsx bench/option-parse.ts`; docs/benchmarks.md ("What an option parse costs") has the
 * figures before and after the option schemas.
 */
import { resolveCodemodeOptions } from '../src/codemode/options.js';
import { resolveEventOptions } from '../src/events/options.js';
import { resolveRecordOptions } from '../src/record/record-options.js';
import { resolveReplayOptions } from '../src/record/replay-options.js';
import { summarize } from './stats.js';

const CALLS = 200_000;
const ROUNDS = 7;

const onRecord = () => {};
const onEvent = () => {};
const executor = { execute: async () => ({}), dispose: async () => {} };
const cases: [string, () => unknown][] = [
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
