/**
 * The worker bundles (src/isolate/host/sandbox/worker-bundle.ts): each is one ES module whose only imports are
 * what workerd provides, with nothing spliced in, and `npm run build` wrote into dist/ what the
 * source bundles to now.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'acorn';
import { describe, expect, it } from 'vitest';
import { LIMITS_PLACEHOLDER } from '../../../../src/isolate/contract/sandbox-constants.js';
import { bundleWorker, WORKER_SCRIPTS, type WorkerScript } from '../../../../src/isolate/host/sandbox/worker-bundle.js';

const root = join(import.meta.dirname, '..', '..', '..', '..');

const bundles = new Map<WorkerScript, string>(
  WORKER_SCRIPTS.map((name) => [name, bundleWorker(join(root, 'src', 'isolate', 'workerd', `${name}.ts`))]),
);

function moduleShape(source: string): { imports: string[]; exports: string[] } {
  const program = parse(source, { ecmaVersion: 'latest', sourceType: 'module' });
  const imports: string[] = [];
  const exports: string[] = [];
  for (const node of program.body) {
    if (node.type === 'ImportDeclaration') imports.push(String(node.source.value));
    if (node.type === 'ExportNamedDeclaration') {
      for (const specifier of node.specifiers) {
        exports.push(
          specifier.exported.type === 'Identifier' ? specifier.exported.name : String(specifier.exported.value),
        );
      }
    }
    if (node.type === 'ExportDefaultDeclaration') exports.push('default');
  }
  return { imports: [...new Set(imports)].sort(), exports: exports.sort() };
}

describe('the worker bundles', () => {
  it('import only what workerd provides: cloudflare:workers, and the harness its caps module', () => {
    expect(moduleShape(bundles.get('supervisor')!).imports).toEqual(['cloudflare:workers']);
    expect(moduleShape(bundles.get('harness')!).imports).toEqual([LIMITS_PLACEHOLDER, 'cloudflare:workers'].sort());
  });

  it('export what workerd and the generated entry module call', () => {
    expect(moduleShape(bundles.get('supervisor')!).exports).toEqual(['Outbound', 'Runner', 'default']);
    expect(moduleShape(bundles.get('harness')!).exports).toEqual(
      ['Entrypoint', 'begin', 'namespace', 'raced', 'returned', 'threw'].sort(),
    );
  });

  it('hold no placeholder to fill and no pre-rendered text to complete', () => {
    for (const source of bundles.values()) {
      // `@__PURE__` is an annotation esbuild keeps, not a placeholder.
      expect(source).not.toMatch(/(?<!@)__[A-Z][A-Z_]+__/);
      expect(source).not.toContain("'{size}'");
      expect(source).not.toContain('"{size}"');
    }
  });

  it('leave the host-only texts and codec out of the sandbox', () => {
    for (const source of bundles.values()) {
      expect(source).not.toContain('isolateText');
      expect(source).not.toContain('hostCodec');
    }
    expect(bundles.get('supervisor')).not.toContain('createBinaryCodec');
  });

  it("bring no module of the host's protocol texts, whose module-level work runs in every fresh isolate", () => {
    // The harness is loaded into a fresh isolate per execution: protocol/texts.ts's regular
    // expression, built at load, cost a trivial execution about 6% (npm run bench -- --against).
    for (const source of bundles.values()) expect(source).not.toContain('// src/protocol/texts.ts');
  });

  it('are in dist/ as the source bundles now (npm run build is not stale)', () => {
    for (const [name, source] of bundles) {
      expect(readFileSync(join(root, 'dist', 'isolate', 'workerd', `${name}.js`), 'utf8'), name).toBe(source);
    }
  });
});
