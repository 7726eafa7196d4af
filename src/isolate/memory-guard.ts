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
 * Should the thread fail, a new one takes over every live guard at once (and the host is warned):
 * nothing else would bound those runs. It opens each descriptor again only if the pid still names
 * the process it guarded (the start time in its /proc/<pid>/stat).
 */
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { isolateText } from './texts.js';

const GUARD_INTERVAL_MS = 2;
/** Faster than any process was measured to fill memory (3.5 MB/ms: buffers, WebAssembly memory, objects). */
const GROWTH_MB_PER_MS = 8;
const MAX_WAIT_MS = 100;

/** The worker's source: plain JavaScript, evaluated as is (no file to resolve from src/ or dist/). */
const GUARD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { openSync, readSync, closeSync, readFileSync } = require('node:fs');
const growthKbPerMs = ${GROWTH_MB_PER_MS * 1024};
const buffer = Buffer.alloc(256);
/** Field 22 of /proc/<pid>/stat: when the process started, which a later one with its pid does not share. */
function startTimeOf(pid) {
  try {
    const stat = readFileSync('/proc/' + pid + '/stat', 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch { return undefined; }
}
/** statm counts pages; the base page size is the first mapping's KernelPageSize. */
const pageKb = (() => {
  try {
    const fd = openSync('/proc/self/smaps', 'r');
    const head = Buffer.alloc(4096);
    const read = readSync(fd, head, 0, head.length, 0);
    closeSync(fd);
    const match = /KernelPageSize:\\s+(\\d+) kB/.exec(head.toString('latin1', 0, read));
    if (match) return Number(match[1]);
  } catch {}
  return 4;
})();
const guarded = new Map();
let timer;
function residentKb(fd) {
  const read = readSync(fd, buffer, 0, buffer.length, 0);
  const resident = Number(buffer.toString('latin1', 0, read).split(' ')[1]);
  return Number.isFinite(resident) && read > 0 ? resident * pageKb : undefined;
}
function unguard(id) {
  const entry = guarded.get(id);
  if (entry === undefined) return;
  guarded.delete(id);
  try { closeSync(entry.fd); } catch {}
}
function sample() {
  const now = performance.now();
  for (const [id, entry] of guarded) {
    if (now < entry.due) continue;
    let rssKb;
    try { rssKb = residentKb(entry.fd); } catch { rssKb = undefined; }
    if (rssKb === undefined) { entry.due = now + ${MAX_WAIT_MS}; continue; }
    if (rssKb <= entry.limitKb) {
      const wait = (entry.limitKb - rssKb) / (2 * growthKbPerMs);
      entry.due = now + Math.min(${MAX_WAIT_MS}, Math.max(${GUARD_INTERVAL_MS}, wait));
      continue;
    }
    try { process.kill(entry.pid, 'SIGKILL'); } catch {}
    unguard(id);
    parentPort.postMessage({ id, rssKb });
  }
  if (guarded.size === 0) { clearInterval(timer); timer = undefined; }
}
parentPort.on('message', (message) => {
  if (!message.guard) { unguard(message.id); return; }
  let fd;
  try { fd = openSync('/proc/' + message.pid + '/statm', 'r'); } catch { return; }
  // Opened first, checked after: the descriptor then names the process that has this start time.
  if (startTimeOf(message.pid) !== message.startTime) { try { closeSync(fd); } catch {} return; }
  guarded.set(message.id, { pid: message.pid, fd, limitKb: message.limitKb, due: 0 });
  timer ??= setInterval(sample, ${GUARD_INTERVAL_MS});
  sample();
});
`;

interface Guard {
  pid: number;
  limitKb: number;
  /** The process's start time (/proc/<pid>/stat), so a new thread guards that process and no later one. */
  startTime: string | undefined;
  exceeded: (rssMb: number) => void;
}

let worker: Worker | undefined;
let nextId = 1;
/** Every live guard, by id: what a new thread takes over. */
const guards = new Map<number, Guard>();

function post(thread: Worker, id: number, guard: Guard): void {
  const { pid, limitKb, startTime } = guard;
  thread.postMessage({ guard: true, id, pid, limitKb, startTime });
}

function guardWorker(): Worker {
  if (worker !== undefined) return worker;
  const started = new Worker(GUARD_SOURCE, { eval: true });
  started.on('message', ({ id, rssKb }: { id: number; rssKb: number }) => {
    const guard = guards.get(id);
    guards.delete(id);
    guard?.exceeded(rssKb / 1024);
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
    process.emitWarning(isolateText.memoryGuardRestarted(failure, guards.size));
    const next = guardWorker();
    for (const [id, guard] of guards) post(next, id, guard);
  });
  // It must not keep the host alive: only guarded runs matter, and those hold the loop already.
  started.unref();
  worker = started;
  return started;
}

function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** The guard's thread while it runs, for a test that makes it fail. */
export function memoryGuardThread(): Worker | undefined {
  return worker;
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
  const guard: Guard = { pid, limitKb: limitMb * 1024, startTime: startTimeOf(pid), exceeded };
  guards.set(id, guard);
  post(guardWorker(), id, guard);
  return () => {
    if (!guards.delete(id)) return;
    worker?.postMessage({ guard: false, id });
  };
}
