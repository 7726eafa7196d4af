/**
 * The flow driver and judge on a scripted session (what a column's runtime host answered is
 * given, so the labels, the normalization and the judging rules are what is tested), and the
 * loader on flow files: the schema's step shape and the boundary a flow names.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type HostStepRequest, withModules } from './flow-host.js';
import type { Flow, StepOutcome } from './flow-model.js';
import { checkFlow, type FlowSession, runFlow } from './flows.js';
import {
  BOUNDARIES_FILE,
  BOUNDARIES_SCHEMA_COMMENT,
  CaseFileError,
  loadCatalogue,
  SCHEMA_COMMENT,
} from './load-cases.js';

const ID_A = 'exec_0001796152571228_0da30fe2-105e-49d1-a648-de7925424b75';
const ID_B = 'exec_0001796152571229_1da30fe2-105e-49d1-a648-de7925424b76';

/** Answers each call with the next scripted outcome, and keeps what it was asked. */
function scripted(answers: StepOutcome[]) {
  const calls: HostStepRequest[] = [];
  const events: string[] = [];
  const session: FlowSession = {
    async step(request) {
      calls.push(request);
      const next = answers.shift();
      if (!next) throw new Error('the script ran out');
      return next;
    },
    async restart() {
      events.push('restart');
    },
    async close() {
      events.push('close');
    },
  };
  return { session, calls, events };
}

const flow = (steps: Flow['steps']): Flow => ({
  id: 'f',
  description: 'd',
  features: ['runtime'],
  connectors: [],
  steps,
});

describe('runFlow', () => {
  it('names executions by label, sends their ids back, and blanks times', async () => {
    const { session, calls, events } = scripted([
      { value: { status: 'paused', executionId: ID_A }, ran: ['store.get'] },
      { value: [{ id: ID_A, createdAt: 1796152571228, note: `see ${ID_B}` }], ran: [] },
      { value: { status: 'completed', executionId: ID_A }, ran: [`store.onPassEnd ${ID_A} completed`] },
    ]);
    const outcome = await runFlow(
      flow([
        { execute: 'async () => 1', as: 'first', expect: {} },
        { executions: null, expect: {} },
        { restart: true, expect: {} },
        { approve: 'first', expect: {} },
      ]),
      session,
    );
    expect(calls[2]?.call).toEqual({ approve: ID_A });
    expect(outcome.steps).toEqual([
      { value: { status: 'paused', executionId: '<first>' }, ran: ['store.get'] },
      { value: [{ id: '<first>', createdAt: '<time>', note: 'see <unnamed-1>' }], ran: [] },
      { ran: [] },
      { value: { status: 'completed', executionId: '<first>' }, ran: ['store.onPassEnd <first> completed'] },
    ]);
    expect(events).toEqual(['restart', 'close']);
  });

  it("hands every step the flow's bundled modules, and none when it has no packages", async () => {
    const modules = { zod: { js: 'export const z = 1' } };
    const answers = () => [{ ran: [] }, { ran: [] }] as StepOutcome[];
    const steps = flow([
      { execute: 'async () => 1', expect: {} },
      { snippets: true, expect: {} },
    ]);
    const withSet = scripted(answers());
    await runFlow(steps, withSet.session, modules);
    expect(withSet.calls.map((request) => request.modules)).toEqual([modules, modules]);
    const without = scripted(answers());
    await runFlow(steps, without.session);
    expect(without.calls.map((request) => 'modules' in request)).toEqual([false, false]);
  });

  it('closes the session when a call fails', async () => {
    const { session, events } = scripted([]);
    await expect(runFlow(flow([{ snippets: true, expect: {} }]), session)).rejects.toThrow('the script ran out');
    expect(events).toEqual(['close']);
  });
});

describe('withModules', () => {
  it("adds the map to every call the runtime makes, beside the runtime's own options", async () => {
    const seen: unknown[] = [];
    const executor = {
      execute: async (_code: string, _providers: unknown, options?: Record<string, unknown>) => seen.push(options),
    };
    const modules = { zod: { js: 'export const z = 1' } };
    await withModules(executor, modules).execute('async () => 1', [], { connectors: ['c'] });
    await withModules(executor, modules).execute('async () => 1', []);
    expect(seen).toEqual([{ connectors: ['c'], modules }, { modules }]);
    expect(withModules(executor, undefined)).toBe(executor);
  });
});

describe('checkFlow', () => {
  const paused = { status: 'paused', executionId: '<#1>', calls: [{ seq: 0 }] };

  it('fails a step where a tool ran that the expectation does not name', () => {
    const steps = flow([{ approve: '#1', expect: { value: paused } }]).steps;
    expect(checkFlow({ steps }, { steps: [{ value: paused, ran: [] }] })).toEqual([]);
    const mismatches = checkFlow({ steps }, { steps: [{ value: paused, ran: ['store.get'] }] });
    expect(mismatches.map((mismatch) => mismatch.path)).toEqual(['steps[0].ran']);
  });

  it('requires a value or a throw left out to be absent', () => {
    const steps = flow([{ rollback: '#1', expect: {} }]).steps;
    const mismatches = checkFlow({ steps }, { steps: [{ value: false, threw: 'boom', ran: [] }] });
    expect(mismatches.map((mismatch) => mismatch.path)).toEqual(['steps[0].value', 'steps[0].threw']);
  });

  it('leaves calls out of runtime outcomes only, for a release that does not echo them', () => {
    const steps = flow([{ execute: 'x', expect: { value: [paused, { calls: 1 }] } }]).steps;
    const older = { steps: [{ value: [{ status: 'paused', executionId: '<#1>' }, { calls: 1 }], ran: [] }] };
    expect(checkFlow({ steps }, older, { withoutCalls: true })).toEqual([]);
    expect(checkFlow({ steps }, older).map((mismatch) => mismatch.path)).toEqual(['steps[0].value[0].calls']);
  });
});

describe('loadCatalogue on flows', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function catalogue(flowText: string): string {
    dir = mkdtempSync(join(tmpdir(), 'flows-'));
    const doc = join(dir, 'upstream.md');
    writeFileSync(doc, '# Upstream\n');
    writeFileSync(
      join(dir, BOUNDARIES_FILE),
      `${BOUNDARIES_SCHEMA_COMMENT}\n- id: runtime\n  release: 0.4.0\n  reason: the runtime arrived in 0.4.0\n` +
        '- id: late\n  release: 0.5.5\n  reason: the gate arrived in 0.5.5\n',
    );
    writeFileSync(join(dir, 'runtime-x.yaml'), `${SCHEMA_COMMENT}\n${flowText}`);
    try {
      loadCatalogue(dir, doc);
      return '';
    } catch (error) {
      expect(error).toBeInstanceOf(CaseFileError);
      return (error as Error).message;
    }
  }

  const FLOW = `
- id: runtime-one
  description: One read.
  features: [runtime]
  connectors: [{ name: store, tools: { get: { returns: 1 } } }]
  steps:
    - execute: async () => store.get({})
      expect: { value: { any: true }, ran: [store.get] }
`;

  it('loads a flow, and refuses a step that makes two calls or an unknown boundary', () => {
    expect(catalogue(FLOW)).toBe('');
    expect(catalogue(FLOW.replace('      expect:', '      approve: x\n      expect:'))).toMatch(
      /runtime-x\.yaml:\d+ \(case "runtime-one"\): \/steps\/0 must be one step/,
    );
    expect(catalogue(FLOW.replace('  features:', '  since: runtimes\n  features:'))).toMatch(
      /\(case "runtime-one"\): \/since names the boundary "runtimes"/,
    );
  });

  it("refuses a skip entry that cannot apply or says nothing, naming the entry's line", () => {
    const skipped = (entry: string) => `${FLOW}  skipOn:\n${entry}`;
    expect(catalogue(skipped('    - before: late\n      steps: [ { value: 1 } ]\n'))).toBe('');
    expect(catalogue(skipped('    - before: lates\n'))).toMatch(
      /runtime-x\.yaml:11 \(case "runtime-one"\): \/skipOn\/0\/before names the boundary "lates"/,
    );
    expect(catalogue(skipped('    - before: late\n      steps: [ { value: 1 }, {} ]\n'))).toMatch(
      /runtime-x\.yaml:12 \(case "runtime-one"\): \/skipOn\/0\/steps has 2 step expectations, but the flow has 1 step: give one per step/,
    );
    expect(
      catalogue(skipped('    - before: late\n      steps: [ { value: { any: true }, ran: [store.get] } ]\n')),
    ).toMatch(/runtime-x\.yaml:12 \(case "runtime-one"\): \/skipOn\/0\/steps equals what the other columns expect/);
    expect(catalogue(skipped('    - before: late\n      steps: [ { threw: { match: "(" } } ]\n'))).toMatch(
      /\/skipOn\/0\/steps\/0\/threw\/match is not a valid regular expression/,
    );
    // Every release before the runtime is unsupported already: the entry could never apply.
    expect(catalogue(skipped('    - before: runtime\n'))).toMatch(
      /\/skipOn\/0\/before skips the releases before runtime \(0\.4\.0\), but the flow's since: runtime \(0\.4\.0\) already leaves every one of them out/,
    );
    expect(catalogue(skipped('    - after: late\n'))).toMatch(/\/skipOn\/0 has an unknown property "after"/);
  });
});
