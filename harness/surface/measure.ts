/** Runs the probe on a live side: a reference column, or ours as a codemode host composes it. */
import { runOnReference } from '../reference/client.js';
import type { StartedReferenceColumn } from '../reference/wrangler.js';
import { PROBE_CASE, type Surface, surfaceFromOutcome } from './probe.js';

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
  const { createOursSide } = await import('../sides/ours.js');
  const side = createOursSide({ maxWorkers: 1 });
  try {
    return surfaceFromOutcome('ours', await side.run(PROBE_CASE));
  } finally {
    await side.dispose();
  }
}
