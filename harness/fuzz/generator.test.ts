/**
 * The generator is deterministic (the same seed gives the same programs, and fast-check's check
 * replays exactly what its sampling gave, which the fuzz run's shrinking relies on), reaches every
 * contact point it names, and renders each program shape as a model writes it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Program, programArbitrary, renderProgram, samplePrograms } from './generator.js';

describe('the fuzz generator', () => {
  it('gives the same programs for the same seed, and others for another', () => {
    const first = samplePrograms(1, 200).map(renderProgram);
    expect(samplePrograms(1, 200).map(renderProgram)).toEqual(first);
    expect(samplePrograms(2, 200).map(renderProgram)).not.toEqual(first);
  });

  it('fast-check check replays the seed in the order its sampling gave', async () => {
    const sampled = samplePrograms(7, 100).map((program) => JSON.stringify(program));
    const checked: string[] = [];
    await fc.check(
      fc.asyncProperty(programArbitrary, async (program) => {
        checked.push(JSON.stringify(program));
        return true;
      }),
      { seed: 7, numRuns: 100 },
    );
    expect(checked).toEqual(sampled);
  });

  it('reaches every shape, statement kind, thrown value and result shape within 500 programs', () => {
    const programs = samplePrograms(1, 500);
    const seen = (pick: (program: Program) => string[]) => new Set(programs.flatMap(pick));
    expect(seen((p) => [p.shape])).toEqual(new Set(['async-arrow', 'arrow', 'bare', 'fenced', 'trailing']));
    expect(seen((p) => p.statements.map((s) => s.kind))).toEqual(
      new Set(['call', 'missing-tool', 'log', 'timer', 'fetch', 'module', 'global', 'json-patch']),
    );
    expect(seen((p) => p.statements.flatMap((s) => (s.kind === 'call' ? [s.mode] : [])))).toEqual(
      new Set(['await', 'parallel', 'nested', 'unawaited', 'caught']),
    );
    expect(seen((p) => (p.thrown ? [p.thrown] : [])).size).toBe(13);
    expect(seen((p) => [p.result]).size).toBe(25);
    expect(seen((p) => [p.provider]).size).toBe(6);
  });

  it('renders each shape as a model writes it', () => {
    const base: Program = {
      shape: 'async-arrow',
      statements: [{ kind: 'log', method: 'warn', args: ['string'] }],
      result: 'number',
      provider: 'codemode',
      timeout: 5000,
      outbound: 'blocked',
    };
    expect(renderProgram(base)).toBe('async () => {\n  let last = null;\n  console.warn("text");\n  return 7;\n}');
    expect(renderProgram({ ...base, shape: 'fenced' })).toMatch(/^```js\nasync \(\) => \{\n[\s\S]*\n\}\n```$/);
    expect(renderProgram({ ...base, shape: 'bare' })).toBe('let last = null;\nconsole.warn("text");\nreturn 7;');
    expect(renderProgram({ ...base, shape: 'trailing' })).toBe('let last = null;\nconsole.warn("text");\n(7)');
    expect(
      renderProgram({
        ...base,
        shape: 'arrow',
        statements: [{ kind: 'call', mode: 'await', tool: 'add', args: 'two-positional' }],
      }),
    ).toBe('() => {\n  let last = null;\n  last = codemode.add(1, 2);\n  return 7;\n}');
    expect(renderProgram({ ...base, thrown: 'null' })).toContain('throw null;');
  });
});
