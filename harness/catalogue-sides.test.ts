/**
 * The catalogue spec's side lifecycle on hand-made sides: bounded starts, a side that cannot start,
 * a preflight that fails, memoized outcomes, a side that breaks mid-run, and the final stop. These
 * test the harness's bookkeeping, not any executor (the catalogue spec runs the real sides).
 */
import { describe, expect, it } from 'vitest';
import type { Case, Outcome, SideName } from './case-model.js';
import { CatalogueSides, type StartedSide } from './catalogue-sides.js';
import { PREFLIGHT_CASE } from './preflight.js';

const item = (id: string): Case => ({
  id,
  description: id,
  features: [],
  code: 'async () => 1',
  expect: { result: 1 },
});

interface FakeOptions {
  /** Rejects the start with this message. */
  startFails?: string;
  /** What the preflight returns (default: 42). */
  preflight?: Outcome;
  output?: string;
  /** Rejects every run of a case whose id is here; `breaks` then makes the preflight reject too. */
  failing?: string[];
  breaks?: boolean;
}

function fakes(options: Partial<Record<SideName, FakeOptions>> = {}) {
  const runs: string[] = [];
  const disposed: SideName[] = [];
  let starting = 0;
  let maxStarting = 0;
  let broken = false;
  const starter = async (name: SideName): Promise<StartedSide> => {
    const settings = options[name] ?? {};
    starting += 1;
    maxStarting = Math.max(maxStarting, starting);
    await new Promise((resolve) => setTimeout(resolve, 5));
    starting -= 1;
    if (settings.startFails !== undefined) throw new Error(settings.startFails);
    return {
      name,
      async run(testCase) {
        if (testCase.id === PREFLIGHT_CASE.id) {
          if (broken) throw new Error('connection refused');
          return settings.preflight ?? { result: 42, logs: [] };
        }
        runs.push(`${name}:${testCase.id}`);
        if (settings.failing?.includes(testCase.id)) {
          if (settings.breaks) broken = true;
          throw new Error(`HTTP 500 on ${testCase.id}`);
        }
        return { result: `${name}:${testCase.id}`, logs: [] };
      },
      output: () => settings.output ?? '',
      async dispose() {
        disposed.push(name);
      },
    };
  };
  return { starter, runs, disposed, maxStarting: () => maxStarting };
}

describe('CatalogueSides', () => {
  it('starts each side once, at most `parallelism` at a time, and stops them all', async () => {
    const world = fakes();
    const sides = new CatalogueSides(world.starter);
    await sides.startAll(['0.2.2', '0.3.8', '0.4.4', 'latest', '0.2.2'], 2);
    expect(world.maxStarting()).toBe(2);
    await Promise.all([sides.ready('0.2.2'), sides.ready('0.2.2')]);
    await sides.stopAll();
    expect(world.disposed.sort()).toEqual(['0.2.2', '0.3.8', '0.4.4', 'latest']);
  });

  it('fails only the side that could not start, with why, and keeps the others', async () => {
    const world = fakes({
      '0.3.8': {
        startFails: 'wrangler dev exited before it was ready. Its output:\nX [ERROR] Could not resolve "zod"',
      },
    });
    const sides = new CatalogueSides(world.starter);
    await sides.startAll(['0.2.2', '0.3.8'], 2);
    await expect(sides.ready('0.3.8')).rejects.toThrow(/^The 0\.3\.8 side did not start[\s\S]*Could not resolve "zod"/);
    await expect(sides.outcome('0.3.8', item('a'))).rejects.toThrow(/0\.3\.8 side did not start/);
    expect(sides.trouble('0.3.8')).toBe('0.3.8 did not start: wrangler dev exited before it was ready. Its output:');
    expect(await sides.outcome('0.2.2', item('a'))).toEqual({ result: '0.2.2:a', logs: [] });
    expect(sides.trouble('0.2.2')).toBeUndefined();
    await sides.stopAll();
    expect(world.disposed).toEqual(['0.2.2']);
  });

  it('refuses a side whose trivial execution is wrong, quoting its output, and stops it', async () => {
    const world = fakes({ latest: { preflight: { error: 'Worker threw', logs: [] }, output: 'wrangler says hello' } });
    const sides = new CatalogueSides(world.starter);
    await sides.startAll(['latest'], 2);
    await expect(sides.ready('latest')).rejects.toThrow(
      /did not give 42: \{"error":"Worker threw","logs":\[\]\}[\s\S]*wrangler says hello/,
    );
    expect(world.disposed).toEqual(['latest']);
    await sides.stopAll();
    expect(world.disposed).toEqual(['latest']);
  });

  it('runs a case once per side, however many ask for it', async () => {
    const world = fakes();
    const sides = new CatalogueSides(world.starter);
    const [first, second] = await Promise.all([sides.outcome('ours', item('a')), sides.outcome('ours', item('a'))]);
    await sides.outcome('latest', item('a'));
    expect(first).toEqual(second);
    expect(world.runs).toEqual(['ours:a', 'latest:a']);
    await sides.stopAll();
  });

  it('keeps going after a failed request when the side still answers, and runs that case again when asked', async () => {
    const world = fakes({ '0.4.4': { failing: ['bad'] } });
    const sides = new CatalogueSides(world.starter);
    await expect(sides.outcome('0.4.4', item('bad'))).rejects.toThrow('HTTP 500 on bad');
    await expect(sides.outcome('0.4.4', item('bad'))).rejects.toThrow('HTTP 500 on bad');
    expect(await sides.outcome('0.4.4', item('good'))).toEqual({ result: '0.4.4:good', logs: [] });
    expect(world.runs).toEqual(['0.4.4:bad', '0.4.4:bad', '0.4.4:good']);
    expect(sides.trouble('0.4.4')).toBeUndefined();
    await sides.stopAll();
  });

  it('fails every later case at once, naming where it broke, when the side stops answering', async () => {
    const world = fakes({ '0.2.2': { failing: ['wedge'], breaks: true } });
    const sides = new CatalogueSides(world.starter);
    await expect(sides.outcome('0.2.2', item('wedge'))).rejects.toThrow('HTTP 500 on wedge');
    await expect(sides.outcome('0.2.2', item('next'))).rejects.toThrow(
      /^The 0\.2\.2 side broke during the run, at case "wedge"[\s\S]*connection refused/,
    );
    expect(world.runs).toEqual(['0.2.2:wedge']);
    expect(sides.trouble('0.2.2')).toBe('0.2.2 broke during the run, at case "wedge": HTTP 500 on wedge');
    await sides.stopAll();
    expect(world.disposed).toEqual(['0.2.2']);
  });

  it('waits for a start still under way before stopping', async () => {
    const world = fakes();
    const sides = new CatalogueSides(world.starter);
    const starting = sides.startAll(['latest'], 1);
    await sides.stopAll();
    await starting;
    expect(world.disposed).toEqual(['latest']);
  });
});
