/**
 * The build of the worker scripts (workerd/supervisor.ts, workerd/harness.ts): each is bundled by
 * esbuild into one ES module, its imports (the channel grammar, the relay and value codecs, the
 * texts) inlined, `cloudflare:workers` and the harness's caps module left to workerd.
 * `npm run build` writes the bundles into dist/ (scripts/bundle-workers.ts); from the source
 * tree, sandbox-sources.ts bundles on first use. esbuild is a devDependency: nothing installed
 * from the package calls this.
 */
import { createRequire } from 'node:module';
import { LIMITS_PLACEHOLDER } from '../../contract/sandbox-constants.js';

/** The worker scripts, by their file name without extension. */
export const WORKER_SCRIPTS = ['supervisor', 'harness'] as const;
export type WorkerScript = (typeof WORKER_SCRIPTS)[number];

interface EsbuildLike {
  buildSync(options: Record<string, unknown>): { outputFiles: { text: string }[] };
}

/** One worker script's bundle, from its TypeScript entry file. */
export function bundleWorker(entryFile: string): string {
  const esbuild = createRequire(import.meta.url)('esbuild') as EsbuildLike;
  const result = esbuild.buildSync({
    entryPoints: [entryFile],
    bundle: true,
    write: false,
    format: 'esm',
    // workerd runs current V8: no syntax is lowered, and `neutral` pulls in no Node polyfill.
    platform: 'neutral',
    target: 'es2022',
    external: ['cloudflare:workers', LIMITS_PLACEHOLDER],
    legalComments: 'none',
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error(`esbuild produced no bundle for ${entryFile}`);
  return output.text;
}
