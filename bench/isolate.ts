/**
 * The IsolateExecutor benchmark: `npx tsx bench/isolate.ts [--quick] [--peer <module>] [--inspector]`.
 *
 * Prints, beside the issue's targets: p50/p95 of a trivial execution; of ten sequential tool
 * calls, and the overhead per tool call; cold start; the time from the bound to the reported
 * timeout of a spin; the heal time after a kill; RSS per pool member.
 *
 * Sides: ours natively (IsolateExecutor) and through the dialect (CodemodeExecutor over it). A
 * peer, such as upstream's DynamicWorkerExecutor under wrangler dev, plugs in with
 * `--peer <module>`: a module whose `createBenchSide()` resolves to a `BenchSide`. The shared
 * workloads (trivial, ten tool calls, fifty tool calls) then run on it too and the ratios are printed.
 *
 * `npm run bench` (bench/run.ts) is the full run: these measures, the reference under wrangler dev
 * and the remote overhead side by side. This script stays for the ours-only view, for `--peer` and
 * for the inspector probe; the ours-only measures live in isolate-measures.ts and serve both.
 *
 * `--inspector` adds the probe recorded in docs/isolate.md: can workerd's inspector
 * (`Runtime.terminateExecution`) stop one isolate's spin without killing the process?
 */

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import WebSocket from 'ws';
import { CodemodeExecutor } from '../src/codemode/codemode-executor.js';
import { capnpString } from '../src/isolate/host/member/supervisor-config.js';
import { resolveWorkerdBinary } from '../src/isolate/host/member/workerd-binary.js';
import { IsolateExecutor } from '../src/isolate/index.js';
import { createEnvelopeDispatch } from '../src/protocol/dispatch.js';
import { coldStart, healAfterKill, memberRss, poolSettled, spinToTimeout } from './isolate-measures.js';
import { ms, printTable, type Summary, summarize, time } from './stats.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const peerModule = args.includes('--peer') ? args[args.indexOf('--peer') + 1] : undefined;

/** One side of the shared workloads, in the dialect's shape (what a peer can offer too). */
export interface BenchSide {
  name: string;
  /** Runs `code` with one provider `api` whose tool `inc(n)` returns n + 1. */
  execute(code: string): Promise<{ result?: unknown; error?: string }>;
  dispose(): Promise<void>;
}

const WORKLOADS = {
  trivial: { code: 'async () => 42', expect: 42 },
  tools10: {
    code: 'async () => { let n = 0; for (let i = 0; i < 10; i++) n = await api.inc(n); return n }',
    expect: 10,
  },
  tools50: {
    code: 'async () => { let n = 0; for (let i = 0; i < 50; i++) n = await api.inc(n); return n }',
    expect: 50,
  },
} as const;

type WorkloadName = keyof typeof WORKLOADS;

const inc = (n: unknown) => (n as number) + 1;

function nativeSide(executor: IsolateExecutor): BenchSide {
  const dispatch = createEnvelopeDispatch({ api: (_tool, [n]) => inc(n) }, { active: true });
  return {
    name: 'ours (native IsolateExecutor)',
    execute: (code) => executor.execute({ code, providers: [{ name: 'api', tools: ['inc'] }], dispatch }),
    dispose: async () => {},
  };
}

function dialectSide(executor: IsolateExecutor): BenchSide {
  const dialect = new CodemodeExecutor(executor);
  return {
    name: 'ours (CodemodeExecutor over it)',
    execute: (code) => dialect.execute(code, [{ name: 'api', fns: { inc } }]),
    dispose: async () => {},
  };
}

async function measureWorkloads(side: BenchSide): Promise<Record<WorkloadName, Summary>> {
  const out = {} as Record<WorkloadName, Summary>;
  for (const name of Object.keys(WORKLOADS) as WorkloadName[]) {
    const { code, expect } = WORKLOADS[name];
    const n = quick ? 30 : name === 'trivial' ? 200 : 100;
    const samples = await time(
      async () => {
        const outcome = await side.execute(code);
        if (outcome.result !== expect) throw new Error(`${side.name} ${name}: ${JSON.stringify(outcome)}`);
      },
      { warmup: quick ? 5 : 20, n },
    );
    out[name] = summarize(samples);
  }
  return out;
}

/** Per tool call: the slope between the trivial run and the fifty-call run, and the ten-call estimate. */
function perCall(results: Record<WorkloadName, Summary>): { slope: number; ten: number } {
  return {
    slope: (results.tools50.p50 - results.trivial.p50) / 50,
    ten: (results.tools10.p50 - results.trivial.p50) / 10,
  };
}

async function loadPeer(): Promise<BenchSide | undefined> {
  if (peerModule === undefined) return undefined;
  const module = (await import(pathToFileURL(peerModule).href)) as { createBenchSide?: () => Promise<BenchSide> };
  if (typeof module.createBenchSide !== 'function') throw new Error(`${peerModule} exports no createBenchSide()`);
  return module.createBenchSide();
}

// ---- the inspector probe -------------------------------------------------------------------------

const PROBE_SUPERVISOR = `export default {
  async fetch(request, env) {
    const worker = env.LOADER.load({ compatibilityDate: "2025-06-01", mainModule: "m.js", globalOutbound: null, modules: { "m.js":
      'import { WorkerEntrypoint } from "cloudflare:workers"; export default class extends WorkerEntrypoint { async evaluate() {' +
      ' await new Promise((r) => setTimeout(r, 300)); const t = Date.now(); while (Date.now() - t < 4000) {} return "the spin ran its full 4 s" } }' } });
    try { return new Response(String(await worker.getEntrypoint().evaluate())); }
    catch (error) { return new Response("evaluate failed: " + error.message); }
  },
};`;

/** One probe: terminateExecution sent `sendAtMs` after the run starts (its spin starts at ~300 ms). */
async function probeInspector(sendAtMs: number): Promise<void> {
  const config = join(tmpdir(), `codemode-inspector-probe-${randomBytes(6).toString('hex')}.capnp`);
  writeFileSync(
    config,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "probe", worker = (modules = [(name = "p.js", esModule = ${capnpString(PROBE_SUPERVISOR)})], compatibilityDate = "2025-06-01", bindings = [(name = "LOADER", workerLoader = ())])) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "probe") ],
);`,
  );
  const child = spawn(
    resolveWorkerdBinary(),
    ['serve', '--experimental', config, '--control-fd=3', '--inspector-addr=127.0.0.1:0'],
    { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] },
  );
  const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
  try {
    const ports: { http?: number; inspector?: number } = {};
    await new Promise<void>((resolve) => {
      let buffered = '';
      child.stdio[3]!.on('data', (chunk: Buffer) => {
        buffered += String(chunk);
        for (const line of buffered.split('\n')) {
          try {
            const event = JSON.parse(line) as { event: string; port: number };
            if (event.event === 'listen') ports.http = event.port;
            if (event.event === 'listen-inspector') ports.inspector = event.port;
          } catch {
            // a partial line
          }
        }
        if (ports.http !== undefined && ports.inspector !== undefined) resolve();
      });
    });
    rmSync(config, { force: true });
    const t0 = performance.now();
    const at = () => `${(performance.now() - t0).toFixed(0)} ms`;
    const run = fetch(`http://127.0.0.1:${ports.http}/`).then(async (response) => ({
      text: await response.text(),
      at: performance.now() - t0,
    }));
    let target: { webSocketDebuggerUrl: string } | undefined;
    while (target === undefined) {
      const list = (await (await fetch(`http://127.0.0.1:${ports.inspector}/json/list`)).json()) as {
        id: string;
        webSocketDebuggerUrl: string;
      }[];
      target = list.find((entry) => entry.id.includes('dynamic'));
    }
    const session = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => session.once('open', resolve).once('error', reject));
    const replies = new Map<number, number>();
    session.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: number };
      if (message.id !== undefined) replies.set(message.id, performance.now() - t0);
    });
    session.send(JSON.stringify({ id: 1, method: 'Runtime.enable' }));
    console.log(`  attached to the dynamic worker's inspector session at ${at()}`);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, sendAtMs - (performance.now() - t0))));
    const sentAt = performance.now() - t0;
    session.send(JSON.stringify({ id: 2, method: 'Runtime.terminateExecution' }));
    console.log(`  the isolate spins from ~300 ms; Runtime.terminateExecution sent at ${sentAt.toFixed(0)} ms`);
    const outcome = await run;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const reply = replies.get(2);
    console.log(`  terminateExecution answered at ${reply === undefined ? 'never' : `${reply.toFixed(0)} ms`}`);
    console.log(`  the run ended at ${outcome.at.toFixed(0)} ms with: ${JSON.stringify(outcome.text)}`);
    const second = await fetch(`http://127.0.0.1:${ports.http}/`)
      .then((response) => response.text())
      .catch((error: Error) => `unreachable: ${error.message}`);
    console.log(
      `  the process afterwards: ${second === 'the spin ran its full 4 s' ? 'alive, and a second spin ran in full' : JSON.stringify(second)}`,
    );
    session.close();
  } finally {
    clearTimeout(guard);
    child.kill('SIGKILL');
    rmSync(config, { force: true });
  }
}

// ---- main -----------------------------------------------------------------------------------------

async function main(): Promise<void> {
  console.log(
    `IsolateExecutor benchmark${quick ? ' (quick)' : ''}, node ${process.version}, ${new Date().toISOString()}\n`,
  );

  const samples = quick ? 3 : 6;
  const cold = await coldStart(quick ? 3 : 7);

  const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 1 } });
  await executor.execute({ code: 'async () => 1' });
  await poolSettled(executor);
  const freshRss = memberRss(executor).map((value) => value ?? Number.NaN);
  const sides: BenchSide[] = [nativeSide(executor), dialectSide(executor)];
  const peer = await loadPeer();
  if (peer !== undefined) sides.push(peer);
  const results = new Map<BenchSide, Record<WorkloadName, Summary>>();
  try {
    for (const side of sides) results.set(side, await measureWorkloads(side));
    const rss = memberRss(executor).map((value) => value ?? Number.NaN);
    const spin = await spinToTimeout(executor, 500, samples);
    const heal = await healAfterKill(executor, samples);
    const bare = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
    await bare.execute({ code: 'async () => 1' });
    const healBare = await healAfterKill(bare, samples).finally(() => bare.dispose());

    const native = results.get(sides[0]!)!;
    const nativeCall = perCall(native);
    console.log("Ours, against the issue's targets (2-core machine):");
    printTable(
      ['measure', 'p50', 'p95', 'min', 'target'],
      [
        [
          'trivial execution (native)',
          ms(native.trivial.p50),
          ms(native.trivial.p95),
          ms(native.trivial.min),
          '<= 6 ms p50, <= 0.5x the reference',
        ],
        [
          'ten sequential tool calls (native)',
          ms(native.tools10.p50),
          ms(native.tools10.p95),
          ms(native.tools10.min),
          '',
        ],
        ['per tool call, (ten - trivial) / 10', ms(nativeCall.ten, 3), '', '', '<= 0.5 ms'],
        ['per tool call, (fifty - trivial) / 50', ms(nativeCall.slope, 3), '', '', '<= 0.5 ms'],
        ['cold start: new executor to first result', ms(cold.p50, 1), ms(cold.p95, 1), ms(cold.min, 1), ''],
        [
          'spin at a 500 ms bound, call to result',
          ms(spin.reported.p50, 1),
          ms(spin.reported.p95, 1),
          ms(spin.reported.min, 1),
          '<= 700 ms',
        ],
        [
          '  of which after the bound',
          ms(spin.reported.p50 - 500, 1),
          ms(spin.reported.p95 - 500, 1),
          ms(spin.reported.min - 500, 1),
          '',
        ],
        [
          '  then the next execution (on the spare)',
          ms(spin.nextRun.p50, 1),
          ms(spin.nextRun.p95, 1),
          ms(spin.nextRun.min, 1),
          '',
        ],
        [
          'kill in a run to its failure reported',
          ms(heal.reported.p50, 1),
          ms(heal.reported.p95, 1),
          ms(heal.reported.min, 1),
          '',
        ],
        [
          'kill to the next result, spare 1 (healed)',
          ms(heal.nextRun.p50, 1),
          ms(heal.nextRun.p95, 1),
          ms(heal.nextRun.min, 1),
          '<= 100 ms',
        ],
        [
          'kill to the next result, spare 0 (respawn)',
          ms(healBare.nextRun.p50, 1),
          ms(healBare.nextRun.p95, 1),
          ms(healBare.nextRun.min, 1),
          '',
        ],
      ],
    );
    console.log(
      `\nRSS per pool member: fresh ${freshRss.map((value) => `${value.toFixed(0)} MB`).join(', ')}; after the runs ${rss.map((value) => `${value.toFixed(0)} MB`).join(', ')}`,
    );

    console.log('\nShared workloads, every side (p50 / p95):');
    printTable(
      ['side', 'trivial', 'ten tool calls', 'fifty tool calls', 'per call'],
      sides.map((side) => {
        const r = results.get(side)!;
        return [
          side.name,
          `${ms(r.trivial.p50)} / ${ms(r.trivial.p95)}`,
          `${ms(r.tools10.p50)} / ${ms(r.tools10.p95)}`,
          `${ms(r.tools50.p50)} / ${ms(r.tools50.p95)}`,
          ms(perCall(r).slope, 3),
        ];
      }),
    );
    if (peer !== undefined) {
      const theirs = results.get(peer)!;
      const dialect = results.get(sides[1]!)!;
      console.log(`\nRatios, ours through the dialect / ${peer.name} (p50):`);
      printTable(
        ['workload', 'ratio', 'target'],
        (Object.keys(WORKLOADS) as WorkloadName[]).map((name) => [
          name,
          (dialect[name].p50 / theirs[name].p50).toFixed(2),
          name === 'trivial' ? '<= 0.5' : '',
        ]),
      );
    } else {
      console.log('\n(No peer: pass --peer <module> exporting createBenchSide() to run the reference side by side.)');
    }
  } finally {
    for (const side of sides) await side.dispose();
    await executor.dispose();
  }

  if (args.includes('--inspector')) {
    console.log('\nInspector probe 1: Runtime.terminateExecution sent while a dynamic worker spins');
    await probeInspector(800);
    console.log('\nInspector probe 2: the same command sent before the spin starts, while the isolate is idle');
    await probeInspector(100);
  }
}

await main();
