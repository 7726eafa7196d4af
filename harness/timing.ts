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

function hasDelay(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasDelay);
  if (value === null || typeof value !== 'object') return false;
  return 'delay' in value || Object.values(value).some(hasDelay);
}

export function involvesTime(item: Case | Flow): boolean {
  if (!isFlow(item) && item.timing !== undefined) return item.timing;
  if (item.features.some((feature) => TIME_FEATURES.has(feature))) return true;
  if (isFlow(item)) return false;
  return item.options?.timeout !== undefined || hasDelay(item.providers) || hasDelay(item.options?.connectors);
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
