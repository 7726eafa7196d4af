/**
 * The memory cap of a running member (`pool.memoryLimitMb`), enforced from a thread of its own:
 * a worker thread reads each guarded process's resident set and SIGKILLs it the moment it passes
 * its cap, then tells the main thread. On its own thread, it keeps its pace when the host's event
 * loop is busy (decoding a large result, say). Linux only (it reads /proc).
 *
 * Each process is read again before it could have written half its remaining headroom at
 * GROWTH_MB_PER_MS, and never later than MAX_WAIT_MS: a process far below its cap (most of them,
 * waiting on a tool) is read a few times a second, one near it every GUARD_INTERVAL_MS. So a
 * pool of hundreds of running members costs the thread little, and a process writing at up to
 * twice that rate still outgrows its cap by at most what it writes in one interval. Each is read
 * through a descriptor of its /proc/<pid>/statm opened once, which names that process and not a
 * later one that reuses its pid.
 *
 * A process is handed to the thread once, when its member starts (one message); each run then
 * arms and disarms its cap through memory the two threads share, without a message: a run's
 * start and end cost the host two stores instead of two thread wake-ups. Only an armed process is
 * read, and the thread sleeps while none is armed (Atomics.waitAsync on a shared counter).
 *
 * Should the thread fail, a new one takes over every live guard at once (and the host is warned):
 * nothing else would bound those runs. It opens each descriptor again only if the pid still names
 * the process it guarded (the start time in its /proc/<pid>/stat).
 */
import * as fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { isolateText } from '../../host/texts.js';
import { type GuardThreadKill, type GuardThreadMessage, guardThreadSource } from './memory-guard-thread.js';
import { processStartTime } from './proc-readers.js';

const GUARD_INTERVAL_MS = 2;
/** Faster than any process was measured to fill memory (3.5 MB/ms: buffers, WebAssembly memory, objects). */
const GROWTH_MB_PER_MS = 8;
const MAX_WAIT_MS = 100;

/** A process's shared cell: its armed cap in kB (0 while no run is armed), and the count of its runs. */
const LIMIT_KB = 0;
const GENERATION = 1;
const MAX_LIMIT_KB = 2 ** 31 - 1;

const GUARD_SOURCE = guardThreadSource({
  growthKbPerMs: GROWTH_MB_PER_MS * 1024,
  intervalMs: GUARD_INTERVAL_MS,
  maxWaitMs: MAX_WAIT_MS,
  limitSlot: LIMIT_KB,
  generationSlot: GENERATION,
});

interface Guard {
  pid: number;
  /** The process's start time (/proc/<pid>/stat), so a new thread guards that process and no later one. */
  startTime: string | undefined;
  /** Shared with the thread: the armed cap and the run count (LIMIT_KB, GENERATION). */
  cell: Int32Array;
  /** The armed run's callback, while a run is armed. */
  exceeded: ((rssMb: number) => void) | undefined;
}

let worker: Worker | undefined;
let nextId = 1;
/** Every live guard, by id: what a new thread takes over. */
const guards = new Map<number, Guard>();
/** Bumped on every arming, so a sleeping thread wakes (it waits on this value). */
const wake = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));

function post(thread: Worker, id: number, guard: Guard): void {
  const { pid, startTime, cell } = guard;
  const message: GuardThreadMessage = { guard: true, id, pid, startTime, cell: cell.buffer as SharedArrayBuffer };
  thread.postMessage(message);
}

const isArmed = (guard: Guard) => Atomics.load(guard.cell, LIMIT_KB) !== 0;

function guardWorker(): Worker {
  if (worker !== undefined) return worker;
  const started = new Worker(GUARD_SOURCE, { eval: true, workerData: { wake } });
  started.on('message', ({ id, generation, rssKb }: GuardThreadKill) => {
    const guard = guards.get(id);
    // The run the thread read is the one still armed, not a later one in the same process.
    if (guard === undefined || !isArmed(guard) || Atomics.load(guard.cell, GENERATION) !== generation) return;
    const exceeded = guard.exceeded;
    guard.exceeded = undefined;
    exceeded?.(rssKb / 1024);
  });
  let failure = 'it exited';
  // Without a listener, the thread's error would be thrown on the host's main thread.
  started.on('error', (error) => {
    failure = error.message;
  });
  // The thread never ends on its own, and nothing here terminates it: an exit is a failure, and
  // the runs it guarded would have no memory bound left.
  started.once('exit', () => {
    if (worker !== started) return;
    worker = undefined;
    if (guards.size === 0) return;
    const armed = [...guards.values()].filter(isArmed).length;
    if (armed > 0) process.emitWarning(isolateText.memoryGuardRestarted(failure, armed));
    const next = guardWorker();
    for (const [id, guard] of guards) post(next, id, guard);
  });
  // It must not keep the host alive: only guarded runs matter, and those hold the loop already.
  started.unref();
  worker = started;
  return started;
}

/** The guard's thread while it runs, for a test that makes it fail. */
export function memoryGuardThread(): Worker | undefined {
  return worker;
}

/** Whether this platform has the off-thread guard. */
const MEMORY_GUARD_AVAILABLE = process.platform === 'linux';

/** The memory guard of one process, for its whole life; each run arms it with its cap. */
export interface ProcessMemoryGuard {
  /**
   * Caps the process at `limitMb` until the returned function is called: past it the process is
   * SIGKILLed and `exceeded` is told the RSS that was read.
   */
  arm(limitMb: number, exceeded: (rssMb: number) => void): () => void;
  /** The process ended: the thread lets it go. */
  close(): void;
}

const UNGUARDED: ProcessMemoryGuard = { arm: () => () => {}, close: () => {} };

/** Hands `pid` to the guard's thread, disarmed; call it once per process, as it starts. */
export function guardProcessMemory(pid: number): ProcessMemoryGuard {
  if (!MEMORY_GUARD_AVAILABLE) return UNGUARDED;
  const id = nextId++;
  const cell = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
  const guard: Guard = { pid, startTime: processStartTime(fs, pid), cell, exceeded: undefined };
  guards.set(id, guard);
  post(guardWorker(), id, guard);
  return {
    arm(limitMb, exceeded) {
      guard.exceeded = exceeded;
      const generation = Atomics.add(cell, GENERATION, 1) + 1;
      // A cap past what an Int32 holds in kB (2 TB) is no cap this machine could reach anyway.
      Atomics.store(cell, LIMIT_KB, Math.min(MAX_LIMIT_KB, Math.max(1, Math.round(limitMb * 1024))));
      Atomics.add(wake, 0, 1);
      Atomics.notify(wake, 0);
      return () => {
        // Only this run's arming: a later run of the process has armed it again.
        if (Atomics.load(cell, GENERATION) !== generation) return;
        guard.exceeded = undefined;
        Atomics.store(cell, LIMIT_KB, 0);
      };
    },
    close() {
      if (!guards.delete(id)) return;
      guard.exceeded = undefined;
      Atomics.store(cell, LIMIT_KB, 0);
      const message: GuardThreadMessage = { guard: false, id };
      worker?.postMessage(message);
    },
  };
}
