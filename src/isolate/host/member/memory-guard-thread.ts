/**
 * The program of the memory guard's thread (memory-guard.ts starts it and says why it exists).
 * It is one self-contained function, evaluated in the thread from its source text, so no file has
 * to be resolved from src/ or dist/; what it needs from outside arrives as its arguments, and the
 * type checker and the linter see it as any other code.
 */
import type * as threads from 'node:worker_threads';
import { selfContainedSource } from '../../../protocol/function-source.js';
import { kernelPageKb, type ProcFs, processStartTime } from './proc-readers.js';

/** The guard's pace and its shared cell's layout, fixed by the main thread. */
export interface GuardThreadSettings {
  /** The fastest a process is taken to write memory, in kB per ms. */
  growthKbPerMs: number;
  /** How often a process near its cap is read. */
  intervalMs: number;
  /** The longest a process far below its cap goes unread. */
  maxWaitMs: number;
  /** Where a process's cell keeps its armed cap in kB (0: unarmed). */
  limitSlot: number;
  /** Where it keeps the count of its runs. */
  generationSlot: number;
}

/** What the main thread posts: a process to guard from now on, or one to let go. */
export type GuardThreadMessage =
  | { guard: true; id: number; pid: number; startTime: string | undefined; cell: SharedArrayBuffer }
  | { guard: false; id: number };

/** What the thread posts back: it killed that process, at that run, having read that RSS. */
export interface GuardThreadKill {
  id: number;
  generation: number;
  rssKb: number;
}

/** `Atomics.waitAsync` (Node 16+), which the ES2022 library's types do not declare. */
interface AtomicsWaitAsync {
  waitAsync(cell: Int32Array, index: number, value: number): { async: false } | { async: true; value: Promise<string> };
}

interface Guarded {
  pid: number;
  fd: number;
  cell: Int32Array;
  generation: number;
  due: number;
  killed: boolean;
}

/**
 * Reads each armed process's resident set and SIGKILLs the one past its cap; sleeps while none is
 * armed, on `wake` (the main thread bumps it at every arming).
 */
function guardThread(
  { parentPort, workerData }: typeof threads,
  procFs: ProcFs,
  settings: GuardThreadSettings,
  startTimeOf: typeof processStartTime,
  pageKbOf: typeof kernelPageKb,
): void {
  if (parentPort === null) throw new Error('The memory guard runs only as a worker thread.');
  const port = parentPort;
  const wake: Int32Array = (workerData as { wake: Int32Array }).wake;
  const buffer = Buffer.alloc(256);
  const pageKb = pageKbOf(procFs);
  const guarded = new Map<number, Guarded>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let sleeping = false;

  function residentKb(fd: number): number | undefined {
    const read = procFs.readSync(fd, buffer, 0, buffer.length, 0);
    const resident = Number(buffer.toString('latin1', 0, read).split(' ')[1]);
    return Number.isFinite(resident) && read > 0 ? resident * pageKb : undefined;
  }

  function unguard(id: number): void {
    const entry = guarded.get(id);
    if (entry === undefined) return;
    guarded.delete(id);
    try {
      procFs.closeSync(entry.fd);
    } catch {
      // Closed with its process already.
    }
  }

  function tick(): void {
    timer ??= setInterval(sample, settings.intervalMs);
    sample();
  }

  function sample(): void {
    // Read before the cells: a cap armed after this read changes it, so the wait below returns at once.
    const seen = Atomics.load(wake, 0);
    const now = performance.now();
    let armed = 0;
    for (const [id, entry] of guarded) {
      const limitKb = Atomics.load(entry.cell, settings.limitSlot);
      if (limitKb === 0 || entry.killed) continue;
      armed += 1;
      const generation = Atomics.load(entry.cell, settings.generationSlot);
      // A new run is read at once: its cap may differ from the last one's.
      if (generation !== entry.generation) {
        entry.generation = generation;
        entry.due = 0;
      }
      if (now < entry.due) continue;
      let rssKb: number | undefined;
      try {
        rssKb = residentKb(entry.fd);
      } catch {
        rssKb = undefined;
      }
      if (rssKb === undefined) {
        entry.due = now + settings.maxWaitMs;
        continue;
      }
      if (rssKb <= limitKb) {
        // Read again before it could have written half its remaining headroom.
        const wait = (limitKb - rssKb) / (2 * settings.growthKbPerMs);
        entry.due = now + Math.min(settings.maxWaitMs, Math.max(settings.intervalMs, wait));
        continue;
      }
      try {
        process.kill(entry.pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
      entry.killed = true;
      const kill: GuardThreadKill = { id, generation, rssKb };
      port.postMessage(kill);
    }
    if (armed > 0 || timer === undefined) return;
    clearInterval(timer);
    timer = undefined;
    if (sleeping) return;
    sleeping = true;
    const waited = (Atomics as unknown as AtomicsWaitAsync).waitAsync(wake, 0, seen);
    const resume = () => {
      sleeping = false;
      tick();
    };
    if (waited.async) void waited.value.then(resume);
    else setImmediate(resume);
  }

  port.on('message', (message: GuardThreadMessage) => {
    if (!message.guard) {
      unguard(message.id);
      return;
    }
    let fd: number;
    try {
      fd = procFs.openSync(`/proc/${message.pid}/statm`, 'r');
    } catch {
      return;
    }
    // Opened first, checked after: the descriptor then names the process that has this start time.
    if (startTimeOf(procFs, message.pid) !== message.startTime) {
      try {
        procFs.closeSync(fd);
      } catch {
        // Nothing held.
      }
      return;
    }
    const cell = new Int32Array(message.cell);
    guarded.set(message.id, { pid: message.pid, fd, cell, generation: -1, due: 0, killed: false });
    tick();
  });
}

/** The thread's program as source text for `new Worker(source, { eval: true })`. */
export function guardThreadSource(settings: GuardThreadSettings): string {
  const argumentsText = [
    "require('node:worker_threads')",
    "require('node:fs')",
    JSON.stringify(settings),
    selfContainedSource(processStartTime),
    selfContainedSource(kernelPageKb),
  ].join(', ');
  return `(${selfContainedSource(guardThread)})(${argumentsText});`;
}
