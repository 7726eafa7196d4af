/**
 * A case's `options.packages`: bundled by bundlePackages (src/bundle/) from the repository's
 * node_modules, once per set for the whole run, and handed to every side as modules beside the
 * map's own. Each side then gets the same map, so a package behaves or fails as the column does.
 */

import { fileURLToPath } from 'node:url';
import { bundlePackages } from '../src/bundle/index.js';
import { messageOf } from '../src/protocol/index.js';
import type { Case, Outcome } from './case-model.js';
import type { Side } from './sides.js';

/** The repository, whose node_modules hold the packages the cases name (devDependencies). */
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Runs a case on a side with its packages bundled into its modules. A set the bundler refuses
 * never reaches `execute`: the refusal is the outcome's `threw` on every side alike.
 */
/** A flow's packages, bundled as a case's are, for the executor its column makes (flows.ts). */
export async function flowModules(packages: readonly string[] | undefined) {
  return packages === undefined ? undefined : bundlePackages(packages, { from: ROOT });
}

export async function runWithPackages(side: Side, item: Case): Promise<Outcome> {
  const packages = item.options?.packages;
  if (packages === undefined) return side.run(item);
  let bundled: Awaited<ReturnType<typeof bundlePackages>>;
  try {
    bundled = await bundlePackages(packages, { from: ROOT });
  } catch (error) {
    return { threw: messageOf(error) };
  }
  const { packages: _bundled, ...options } = item.options!;
  return side.run({ ...item, options: { ...options, modules: { ...options.modules, ...bundled } } });
}
