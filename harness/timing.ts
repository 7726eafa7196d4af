/**
 * Whether a case's expectation involves time: a bound, a delay, a clock. Such a case can fail
 * once on a loaded machine, so `npm run matrix` reruns a failing cell of it once, and a cell that
 * passes then is flaky, not failed. A case says so with `timing`; absent, it is derived here.
 */
import type { Case } from './case-model.js';
import type { Flow } from './flow-model.js';
import { isFlow } from './judge.js';
import type { MatrixCell } from './report/model.js';

/** Features whose cases measure time. */
const TIME_FEATURES = new Set(['timeout', 'clock']);

/** Whether `key` is a field of the value or of anything inside it. */
function hasField(value: unknown, key: string): boolean {
  if (Array.isArray(value)) return value.some((inner) => hasField(inner, key));
  if (value === null || typeof value !== 'object') return false;
  return key in value || Object.values(value).some((inner) => hasField(inner, key));
}

const hasDelay = (value: unknown) => hasField(value, 'delay');

export function involvesTime(item: Case | Flow): boolean {
  if (!isFlow(item) && item.timing !== undefined) return item.timing;
  if (item.features.some((feature) => TIME_FEATURES.has(feature))) return true;
  if (isFlow(item)) return false;
  return item.options?.timeout !== undefined || hasDelay(item.providers) || hasDelay(item.options?.connectors);
}

/**
 * Whether the case holds its column's lane alone (harness/lanes.ts) instead of sharing it with
 * other cases: it involves time, or it is a flow whose tools answer late or whose steps start
 * late, so that the order of what it runs depends on a clock.
 */
export function holdsLaneAlone(item: Case | Flow): boolean {
  if (involvesTime(item)) return true;
  return isFlow(item) && (hasDelay(item.connectors) || hasField(item.steps, 'after'));
}

/**
 * One cell, rerun once when it failed and its case involves time: the cell is the rerun's, and
 * carries the first attempt. `attempt` runs the case once on the column.
 */
export async function withRerun<Result extends { cell: MatrixCell }>(
  item: Case | Flow,
  attempt: () => Promise<Result>,
  mayRerun: () => boolean = () => true,
): Promise<Result> {
  const first = await attempt();
  if (first.cell.status !== 'fail' || !involvesTime(item) || !mayRerun()) return first;
  const again = await attempt();
  const { status, reason } = first.cell;
  return { ...again, cell: { ...again.cell, rerun: { status, ...(reason ? { reason } : {}) } } };
}
