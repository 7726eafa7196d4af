/**
 * The source texts workerd runs: the supervisor worker and the harness module of every execution,
 * each one ES module bundled from workerd/*.ts (worker-bundle.ts). `npm run build` writes them
 * into dist/isolate/workerd/; from the source tree they are bundled on first use.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LIMITS_MODULE, LIMITS_PLACEHOLDER } from '../../contract/sandbox-constants.js';
import { bundleWorker, type WorkerScript } from './worker-bundle.js';

export interface SandboxSources {
  supervisor: string;
  harness: string;
}

let cached: SandboxSources | undefined;

function workerScript(name: WorkerScript): string {
  const bundled = new URL(`../../workerd/${name}.js`, import.meta.url);
  if (existsSync(bundled)) return readFileSync(bundled, 'utf8');
  return bundleWorker(fileURLToPath(new URL(`../../workerd/${name}.ts`, import.meta.url)));
}

/** The harness, importing its caps under this process's `LIMITS_MODULE`. */
function harnessScript(): string {
  const source = workerScript('harness');
  const placeholder = JSON.stringify(LIMITS_PLACEHOLDER);
  if (source.split(placeholder).length !== 2) {
    throw new Error(`The harness bundle must import ${placeholder} exactly once; rebuild it (npm run build).`);
  }
  return source.replace(placeholder, JSON.stringify(LIMITS_MODULE));
}

export function sandboxSources(): SandboxSources {
  cached ??= { supervisor: workerScript('supervisor'), harness: harnessScript() };
  return cached;
}
