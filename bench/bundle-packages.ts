/**
 * `npx tsx bench/bundle-packages.ts`: what bundlePackages costs, per package (zod, date-fns,
 * lodash-es), each in a fresh process: cold (esbuild bundles), warm (the same set again in the
 * process), from the disk cache in another fresh process (hashing the package's files, then one
 * read), and the bundle's size. docs/benchmarks.md records the figures.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGES = ['zod', 'date-fns', 'lodash-es'];
const ROUNDS = 5;
const SELF = fileURLToPath(import.meta.url);

/** One measure in this process: `<package> <cacheDir|->` → JSON on stdout. */
async function measureOnce(name: string, cacheDir: string | undefined): Promise<void> {
  const { bundlePackages } = await import('../src/bundle/index.js');
  const options = cacheDir === undefined ? {} : { cacheDir };
  let started = performance.now();
  const map = await bundlePackages([name], options);
  const firstMs = performance.now() - started;
  const warm: number[] = [];
  for (let index = 0; index < 1000; index += 1) {
    started = performance.now();
    await bundlePackages([name], options);
    warm.push(performance.now() - started);
  }
  warm.sort((a, b) => a - b);
  const bytes = Buffer.byteLength(map[name]!.js);
  process.stdout.write(JSON.stringify({ firstMs, warmMedianMs: warm[500], bytes }));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function fresh(name: string, cacheDir: string | undefined) {
  const out = execFileSync('node', ['--import', 'tsx', SELF, name, cacheDir ?? '-'], { encoding: 'utf8' });
  return JSON.parse(out) as { firstMs: number; warmMedianMs: number; bytes: number };
}

async function main(): Promise<void> {
  const [name, cacheArg] = process.argv.slice(2);
  if (name !== undefined) return measureOnce(name, cacheArg === '-' ? undefined : cacheArg);
  process.stdout.write(
    '| package | bytes (minified) | cold ms | warm ms (median) | from disk cache ms |\n|---|---|---|---|---|\n',
  );
  for (const pkg of PACKAGES) {
    const cold: number[] = [];
    const warm: number[] = [];
    const disk: number[] = [];
    let bytes = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const measured = fresh(pkg, undefined);
      cold.push(measured.firstMs);
      warm.push(measured.warmMedianMs);
      bytes = measured.bytes;
      const cacheDir = mkdtempSync(join(tmpdir(), 'codemode-bench-bundle-'));
      try {
        fresh(pkg, cacheDir);
        disk.push(fresh(pkg, cacheDir).firstMs);
      } finally {
        rmSync(cacheDir, { recursive: true, force: true });
      }
    }
    const ms = (value: number) => value.toFixed(value < 1 ? 3 : 0);
    process.stdout.write(`| ${pkg} | ${bytes} | ${ms(median(cold))} | ${ms(median(warm))} | ${ms(median(disk))} |\n`);
  }
}

await main();
