/**
 * The surface probe as a case: `probe.source.js`, read as text so that no compiler rewrites it,
 * run as the code of one `execute` on any side. Its result is a `Surface`.
 */
import { readFileSync } from 'node:fs';
import type { Case, Outcome } from '../case-model.js';
import { probeFailed } from './messages.js';

/** What the probe measured about one name, as user code sees it. */
export interface SurfaceEntry {
  /** `own`, or the name of the prototype that holds it. Absent on capability entries. */
  owner?: string;
  /** `data` or `accessor` (a getter/setter pair). Absent on capability entries. */
  access?: 'data' | 'accessor';
  /** `typeof`, refined for functions into `class`, `constructor` or `function`; `throws` if reading failed. */
  kind: string;
  /** `length` of a function, else null. */
  arity: number | null;
  /** The name of the prototype's constructor (or its brand), `null` for a primitive. */
  prototype: string | null;
  /** `Object.prototype.toString` tag of an object or function, else null. */
  brand: string | null;
}

/** Key (`global <name>`, `capability <name>`, `member <capability>.<name>`) → entry. */
export type Surface = Record<string, SurfaceEntry>;

const PROBE_SOURCE = readFileSync(new URL('./probe.source.js', import.meta.url), 'utf8');

export const PROBE_CASE: Case = {
  id: 'surface-probe',
  description: 'Reads the global surface, the members of every capability and their brands',
  features: [],
  code: PROBE_SOURCE,
  expect: { result: { any: true }, logs: { any: true } },
};

/** The probe's record, or an error showing what came back instead. */
export function surfaceFromOutcome(side: string, outcome: Outcome): Surface {
  const { result } = outcome;
  if (
    outcome.error !== undefined ||
    outcome.threw !== undefined ||
    typeof result !== 'object' ||
    result === null ||
    Array.isArray(result)
  ) {
    throw new Error(probeFailed(side, outcome));
  }
  return result as Surface;
}
