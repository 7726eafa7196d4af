/**
 * A case's packages (harness/packages.ts): bundled into the modules every side is handed, and a
 * refused set is the outcome's threw without a side being asked.
 */
import { describe, expect, it } from 'vitest';
import type { Case, Outcome } from './case-model.js';
import { runWithPackages } from './packages.js';
import type { Side } from './side-model.js';

function recordingSide(): { side: Side; seen: Case[] } {
  const seen: Case[] = [];
  const side: Side = {
    name: 'ours',
    run: async (item): Promise<Outcome> => {
      seen.push(item);
      return { result: 'ran', logs: [] };
    },
    dispose: async () => {},
  };
  return { side, seen };
}

const base = {
  id: 'c',
  description: 'd',
  features: ['packages'],
  code: 'async () => 1',
  expect: {},
} as unknown as Case;

describe('a case that names packages', () => {
  it("hands the side the bundles beside the case's own modules, and no packages field", async () => {
    const { side, seen } = recordingSide();
    await runWithPackages(side, {
      ...base,
      options: { packages: ['uuid'], modules: { 'own.js': 'export const x = 1' } },
    });
    expect(seen).toHaveLength(1);
    const options = seen[0]!.options!;
    expect(Object.keys(options)).toEqual(['modules']);
    expect(Object.keys(options.modules!)).toEqual(['own.js', 'uuid']);
    expect((options.modules!.uuid as { js: string }).js).toContain('validate');
  });

  it('reports a refused set as threw, without running the side', async () => {
    const { side, seen } = recordingSide();
    const outcome = await runWithPackages(side, { ...base, options: { packages: ['dotenv'] } });
    expect(seen).toHaveLength(0);
    expect(outcome.threw).toMatch(/^Cannot bundle "dotenv" for the sandbox: it imports the Node built-in/);
  });

  it('leaves a case without packages as it is', async () => {
    const { side, seen } = recordingSide();
    const item = { ...base, options: { modules: { 'own.js': 'export const x = 1' } } };
    await runWithPackages(side, item);
    expect(seen[0]).toBe(item);
  });
});
