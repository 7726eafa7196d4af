// Writes the worker bundles (src/isolate/workerd/*.ts, see src/isolate/host/sandbox/worker-bundle.ts) into
// dist/isolate/workerd/, where the compiled sandbox-sources.js reads them. Runs after tsc.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorker, WORKER_SCRIPTS } from '../src/isolate/host/sandbox/worker-bundle.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'dist', 'isolate', 'workerd');
mkdirSync(target, { recursive: true });
for (const name of WORKER_SCRIPTS) {
  writeFileSync(join(target, `${name}.js`), bundleWorker(join(root, 'src', 'isolate', 'workerd', `${name}.ts`)));
}
