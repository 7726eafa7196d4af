/**
 * Upstream's own code, read from the installed `@cloudflare/codemode` without running its root
 * entry (which imports `cloudflare:workers`, a scheme Node cannot load).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);

/** The `dist` directory of the installed release. Resolving the entry does not execute it. */
export function upstreamDist(): string {
  return dirname(require.resolve('@cloudflare/codemode'));
}

export function upstreamVersion(): string {
  return (JSON.parse(readFileSync(join(upstreamDist(), '..', 'package.json'), 'utf8')) as { version: string }).version;
}

export interface UpstreamHelpers {
  chunk: string;
  normalizeCode: (code: string) => string;
  sanitizeToolName: (name: string) => string;
}

/**
 * Imports the dist chunk that defines both helpers by file path. Chunk names carry a content hash,
 * so it is found by what it defines; it must not import `cloudflare:workers`. Exports are minified
 * (`s as normalizeCode`), so the names are read from its export clause.
 */
export async function loadUpstreamHelpers(): Promise<UpstreamHelpers> {
  const dist = upstreamDist();
  const candidates = readdirSync(dist)
    .filter((file) => file.endsWith('.js'))
    .filter((file) => {
      const source = readFileSync(join(dist, file), 'utf8');
      return (
        source.includes('function normalizeCode(') &&
        source.includes('function sanitizeToolName(') &&
        !source.includes('cloudflare:workers')
      );
    });
  if (candidates.length !== 1)
    throw new Error(`Expected one chunk defining both helpers in ${dist}, found ${JSON.stringify(candidates)}`);
  const chunk = candidates[0]!;
  const source = readFileSync(join(dist, chunk), 'utf8');
  const exportClause = [...source.matchAll(/^export\s*\{([^}]*)\}/gm)].at(-1);
  if (!exportClause) throw new Error(`No export clause in ${chunk}`);
  const exported = new Map<string, string>();
  for (const entry of exportClause[1]!.split(',')) {
    const [local, alias] = entry.trim().split(/\s+as\s+/);
    if (local) exported.set(local, alias ?? local);
  }
  const module = (await import(pathToFileURL(join(dist, chunk)).href)) as Record<string, unknown>;
  const pick = (name: string) => {
    const fn = module[exported.get(name) ?? name];
    if (typeof fn !== 'function') throw new Error(`${chunk} does not export ${name}`);
    return fn as (input: string) => string;
  };
  return { chunk, normalizeCode: pick('normalizeCode'), sanitizeToolName: pick('sanitizeToolName') };
}

/** The reserved-name set the executor in the root chunk builds, read as text. */
export function upstreamExecutorReservedNames(): string[] {
  const source = readFileSync(join(upstreamDist(), 'index.js'), 'utf8');
  const literal = /RESERVED_NAMES = \/\* @__PURE__ \*\/ new Set\(\[([^\]]*)\]\)/.exec(source);
  if (!literal) throw new Error('No RESERVED_NAMES set in the upstream root chunk');
  return JSON.parse(`[${literal[1]!}]`) as string[];
}
