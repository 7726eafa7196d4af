/**
 * How deep a value capnweb can carry. capnweb refuses to serialize a value nested deeper than its
 * depth limit, and the refusal reaches the client as a plain Error of capnweb's; so the daemon
 * measures an answer first and refuses it with a LIMIT_EXCEEDED of its own.
 */
import { DEFAULT_LIMITS } from 'capnweb';

/** capnweb's bound: a value at this depth (the answer itself at 0) is not serialized. */
export const MAX_WIRE_DEPTH = DEFAULT_LIMITS.maxDepth;

/** True when some value inside `value`, a primitive included, sits at `MAX_WIRE_DEPTH` or deeper. Stops at the first such. */
export function exceedsWireDepth(value: unknown): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (depth >= MAX_WIRE_DEPTH) return true;
    if (typeof current !== 'object' || current === null) continue;
    if (ArrayBuffer.isView(current)) continue;
    for (const child of Array.isArray(current) ? current : Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}
