/**
 * The surface probe as a case: `probe.source.js`, read as text so that no compiler rewrites it,
 * run as the code of one `execute` on a live side (a reference column, or ours as a codemode host
 * composes it). Its result is a `Surface`.
 */
import { readFileSync } from 'node:fs';
import type { Case, Outcome } from '../case-model.js';
import { runOnReference, type StartedReferenceColumn } from '../reference/wrangler.js';
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

const PROBE_CASE: Case = {
  id: 'surface-probe',
  description: 'Reads the global surface, the members of every capability and their brands',
  features: [],
  code: PROBE_SOURCE,
  expect: { result: { any: true }, logs: { any: true } },
};

/** The probe's record, or an error showing what came back instead. */
function surfaceFromOutcome(side: string, outcome: Outcome): Surface {
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

export const SURFACE_SIDES = ['reference', 'ours'] as const;
export type SurfaceSide = (typeof SURFACE_SIDES)[number];

/** The column the inventory reads: the newest release, since that is what a host installs today. */
export const SURFACE_REFERENCE_COLUMN = 'latest';

export async function measureReferenceSurface(column: StartedReferenceColumn): Promise<Surface> {
  return surfaceFromOutcome(`reference column ${column.column.name}`, await runOnReference(column, PROBE_CASE));
}

/**
 * Our side: `new CodemodeExecutor(new IsolateExecutor(...))` through the catalogue's side, which
 * composes it exactly so. Imported lazily, so the reference half runs even while ours cannot load.
 */
export async function measureOurSurface(): Promise<Surface> {
  const { createOursSide } = await import('../sides.js');
  const side = await createOursSide();
  try {
    return surfaceFromOutcome('ours', await side.run(PROBE_CASE));
  } finally {
    await side.dispose();
  }
}
