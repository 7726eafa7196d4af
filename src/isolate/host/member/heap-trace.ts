/**
 * V8's GC trace, read to tell when an isolate's heap is full. Every pool member runs with
 * `--trace-gc --trace-gc-ignore-scavenger` (supervisor-config.ts), so V8 prints one line per
 * full collection on workerd's stdout, which reaches us with its stderr:
 *
 *   [pid:isolate]  2597 ms: Mark-Compact 265.0 (269.2) -> 258.6 (278.4) MB, ...
 *
 * A heap that is still at its cap after a full collection cannot make room: V8 would spend
 * seconds in further collections before it aborts, so the host ends the run as out of memory at
 * once, whatever its bound.
 *
 * A sandbox's console is dropped before it reaches that output (workerd/console-capture.ts), but
 * the host does not rely on it: a line alone proves nothing. It counts only when the process holds
 * at least that much memory, which a printed line cannot fake.
 */

/** The share of the heap cap a full collection leaving this much live counts as full. */
const FULL_HEAP_SHARE = 0.95;

const MARK_COMPACT = /Mark-Compact(?: \(reduce\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \(/;

/** The heap left after a full collection, in MB, if the line reports one. */
function heapAfterFullCollection(line: string): number | undefined {
  const match = MARK_COMPACT.exec(line);
  return match === null ? undefined : Number(match[1]);
}

/** Whether a trace line says a heap capped at `heapLimitMb` is full. */
export function reportsFullHeap(line: string, heapLimitMb: number): boolean {
  const after = heapAfterFullCollection(line);
  return after !== undefined && after >= FULL_HEAP_SHARE * heapLimitMb;
}

/**
 * Whether a heap capped at `heapLimitMb` is full: a trace line says so, and the process's
 * resident set (read only then; undefined when unreadable) is at least that large.
 */
export function heapIsFull(line: string, heapLimitMb: number, residentMb: () => number | undefined): boolean {
  if (!reportsFullHeap(line, heapLimitMb)) return false;
  const resident = residentMb();
  return resident !== undefined && resident >= FULL_HEAP_SHARE * heapLimitMb;
}

/** The V8 flags that make the trace. */
export const HEAP_TRACE_FLAGS: readonly string[] = ['--trace-gc', '--trace-gc-ignore-scavenger'];
