/**
 * How much slower than a quiet machine this one runs right now, for the tests that assert a
 * wall-clock product bound (a heartbeat lease, a run clock that excludes host waits): they keep
 * the assertion and stretch its figures by this factor, so a shared CI runner does not fail them.
 * A test that asserts a result never needs it. docs/testing.md lists the tests that use it.
 *
 * Measured once per test file, from two readings: the share of a core a busy loop gets
 * over 60 ms (a quiet core gives it all), and the load average per core. The larger slowdown wins,
 * between 1 and MAX_SLOWDOWN. CODEMODE_TEST_SLOWDOWN overrides it, for a reproducible run.
 */
import { availableParallelism, loadavg } from 'node:os';

const MAX_SLOWDOWN = 10;
const PROBE_MS = 60;

let measured: number | undefined;

function probeCoreShare(): number {
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  while (performance.now() - wallBefore < PROBE_MS);
  const cpu = process.cpuUsage(cpuBefore);
  const wall = performance.now() - wallBefore;
  return Math.min(1, (cpu.user + cpu.system) / 1000 / wall);
}

function measure(): number {
  const override = process.env.CODEMODE_TEST_SLOWDOWN;
  if (override !== undefined) {
    const factor = Number(override);
    if (!(factor >= 1)) throw new Error(`CODEMODE_TEST_SLOWDOWN must be a number of at least 1, not ${override}`);
    return factor;
  }
  const share = probeCoreShare();
  const perCore = loadavg()[0]! / availableParallelism();
  const slowdown = Math.max(1, share > 0 ? 1 / share : MAX_SLOWDOWN, perCore);
  return Math.min(MAX_SLOWDOWN, Math.round(slowdown * 10) / 10);
}

/**
 * Forgets the measured slowdown, so the next use measures it again: files that share a process
 * each measure it when they start (test/setup/machine-slowdown.ts).
 */
export function measureSlowdownAgain(): void {
  measured = undefined;
}

/** This machine's slowdown, at least 1 (measured on first use in a process, or after measureSlowdownAgain). */
export function machineSlowdown(): number {
  measured ??= measure();
  return measured;
}

/** A wall-clock figure of a quiet machine, stretched by this machine's slowdown (whole ms). */
export function withSlack(quietMs: number): number {
  return Math.ceil(quietMs * machineSlowdown());
}
