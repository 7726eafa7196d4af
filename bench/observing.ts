/**
 * `npm run bench -- --phase observing`: what observing a run costs (docs/observing.md). On one
 * IsolateExecutor through the dialect, the trivial execution and ten sequential tool calls, with
 * nothing on and with all three on (an `onEvent`, a registered OpenTelemetry SDK exporting to
 * memory, `record: true`), in alternating blocks. Per tool call is
 * (ten calls − trivial) / 10 of the medians. Also the cost of the check a call without `onEvent`
 * and without an SDK pays (observeCall), timed alone.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { materializeProviders } from '../harness/tools.js';
import { CodemodeExecutor } from '../src/codemode/codemode-executor.js';
import type { ExtendedExecuteOptions } from '../src/codemode/types.js';
import { observeCall } from '../src/events/observe-run.js';
import { IsolateExecutor } from '../src/isolate/index.js';
import { summarize } from './stats.js';
import { checkOutcome, WORKLOADS } from './workloads.js';

interface PassFigures {
  trivialP50: number;
  tools10P50: number;
  perCallMs: number;
}

export interface ObservingResults {
  off: PassFigures;
  allOn: PassFigures;
  /** Nanoseconds of `observeCall` for a call with no options, no SDK registered. */
  idleCheckNs: number;
  rounds: number;
}

/** Rounds run in a row in one mode before the other mode's turn: short, so both see the same load. */
const BLOCK_ROUNDS = 10;

type Samples = Record<string, number[]>;

async function block(
  executor: CodemodeExecutor,
  rounds: number,
  samples: Samples,
  options: () => ExtendedExecuteOptions,
) {
  for (let round = 0; round < rounds; round++) {
    for (const workload of WORKLOADS) {
      const started = performance.now();
      const outcome = await executor.execute(workload.code, materializeProviders(workload.providers), options());
      (samples[workload.name] ??= []).push(performance.now() - started);
      checkOutcome('observing', workload, outcome);
    }
  }
}

function figures(samples: Samples): PassFigures {
  const trivialP50 = summarize(samples.trivial ?? []).p50;
  const tools10P50 = summarize(samples.tools10 ?? []).p50;
  return { trivialP50, tools10P50, perCallMs: (tools10P50 - trivialP50) / 10 };
}

function idleCheckNs(): number {
  const calls = 1_000_000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) observeCall('execute', undefined);
  return Number(process.hrtime.bigint() - started) / calls;
}

/**
 * Nothing on and all three on, in alternating blocks of BLOCK_ROUNDS rounds (the SDK registered
 * for the one and unregistered for the other), so a drift of the machine's load reaches both.
 */
export async function measureObserving(
  plan: { warmup: number; rounds: number },
  track: (executor: IsolateExecutor) => void,
): Promise<ObservingResults> {
  const native = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 1 } });
  track(native);
  const executor = new CodemodeExecutor(native);
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  let events = 0;
  const allOn = (): ExtendedExecuteOptions => ({ onEvent: () => void (events += 1), record: true });
  await block(executor, plan.warmup, {}, () => ({}));
  const idle = idleCheckNs();
  const off: Samples = {};
  const on: Samples = {};
  for (let done = 0; done < plan.rounds; done += BLOCK_ROUNDS) {
    const rounds = Math.min(BLOCK_ROUNDS, plan.rounds - done);
    await block(executor, rounds, off, () => ({}));
    trace.setGlobalTracerProvider(provider);
    context.setGlobalContextManager(contextManager);
    await block(executor, rounds, on, allOn);
    trace.disable();
    context.disable();
    exporter.reset();
  }
  if (events === 0) throw new Error('observing: no event was delivered');
  return { off: figures(off), allOn: figures(on), idleCheckNs: idle, rounds: plan.rounds };
}

export function printObserving(results: ObservingResults): void {
  const row = (label: string, figures: PassFigures) =>
    `| ${label} | ${figures.trivialP50.toFixed(2)} | ${figures.tools10P50.toFixed(2)} | ${figures.perCallMs.toFixed(3)} |`;
  console.log(
    `\nObserving a run (IsolateExecutor through the dialect, ${results.rounds} rounds each, in alternating blocks; medians in ms)\n`,
  );
  console.log('| pass | trivial p50 | ten tool calls p50 | per tool call |');
  console.log('|---|---|---|---|');
  console.log(row('nothing on', results.off));
  console.log(row('events + spans + record', results.allOn));
  console.log(
    `\nA call without onEvent and without an SDK: ${results.idleCheckNs.toFixed(0)} ns for the check (observeCall).`,
  );
}
