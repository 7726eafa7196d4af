/**
 * The memory cap of a running member (`pool.memoryLimitMb`), enforced from a thread of its own:
 * a worker thread reads each guarded process's resident set every GUARD_INTERVAL_MS and SIGKILLs
 * it the moment it passes its cap, then tells the main thread. On its own thread, it keeps its
 * pace when the host's event loop is busy (decoding a large result, say), so a process writing
 * gigabytes outgrows its cap by at most what it writes in one interval. Linux only (it reads
 * /proc); elsewhere the run's watch samples RSS from the main thread (process-watch.ts).
 */
import { Worker } from 'node:worker_threads';

const GUARD_INTERVAL_MS = 2;

/** The worker's source: plain JavaScript, evaluated as is (no file to resolve from src/ or dist/). */
const GUARD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const guarded = new Map();
let timer;
function sample() {
  for (const [id, { pid, limitKb }] of guarded) {
    let rssKb;
    try {
      const match = /^VmRSS:\\s+(\\d+)\\s+kB/m.exec(readFileSync('/proc/' + pid + '/status', 'utf8'));
      rssKb = match ? Number(match[1]) : undefined;
    } catch {
      rssKb = undefined;
    }
    if (rssKb === undefined || rssKb <= limitKb) continue;
    try { process.kill(pid, 'SIGKILL'); } catch {}
    guarded.delete(id);
    parentPort.postMessage({ id, rssKb });
  }
  if (guarded.size === 0) { clearInterval(timer); timer = undefined; }
}
parentPort.on('message', (message) => {
  if (message.guard) {
    guarded.set(message.id, { pid: message.pid, limitKb: message.limitKb });
    timer ??= setInterval(sample, ${GUARD_INTERVAL_MS});
  } else guarded.delete(message.id);
});
`;

let worker: Worker | undefined;
let nextId = 1;
const alarms = new Map<number, (rssMb: number) => void>();

function guardWorker(): Worker {
  if (worker !== undefined) return worker;
  const started = new Worker(GUARD_SOURCE, { eval: true });
  started.on('message', ({ id, rssKb }: { id: number; rssKb: number }) => {
    const alarm = alarms.get(id);
    alarms.delete(id);
    alarm?.(rssKb / 1024);
  });
  // A thread that cannot run leaves the main thread's watch to do the job.
  started.on('error', () => {
    if (worker === started) worker = undefined;
  });
  // It must not keep the host alive: only guarded runs matter, and those hold the loop already.
  started.unref();
  worker = started;
  return started;
}

/** Whether this platform has the off-thread guard. */
const MEMORY_GUARD_AVAILABLE = process.platform === 'linux';

/**
 * Guards `pid` until the returned function is called: past `limitMb` it is SIGKILLed and
 * `exceeded` is told the RSS that was read.
 */
export function guardMemory(pid: number, limitMb: number, exceeded: (rssMb: number) => void): () => void {
  if (!MEMORY_GUARD_AVAILABLE) return () => {};
  const id = nextId++;
  alarms.set(id, exceeded);
  guardWorker().postMessage({ guard: true, id, pid, limitKb: limitMb * 1024 });
  return () => {
    if (!alarms.delete(id)) return;
    worker?.postMessage({ guard: false, id });
  };
}
