// Writes the worker bundles (src/isolate/worker/*.ts, see src/isolate/sandbox/worker-bundle.ts) into
// dist/isolate/worker/, where the compiled sandbox-sources.js reads them. Runs after tsc.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorker, WORKER_SCRIPTS } from '../src/isolate/sandbox/worker-bundle.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'dist', 'isolate', 'worker');
mkdirSync(target, { recursive: true });
for (const name of WORKER_SCRIPTS) {
  writeFileSync(join(target, `${name}.js`), bundleWorker(join(root, 'src', 'isolate', 'worker', `${name}.ts`)));
}
