/**
 * The rules on hand-made cases and outcomes: which columns a boundary skips, what the reference
 * cannot run, which expectation a cell is judged by, and how each outcome settles. These test the
 * judging, not any executor: the catalogue runs the real columns.
 */
import { describe, expect, it } from 'vitest';
import type { Boundary, Case, Outcome } from './case-model.js';
import { type Plan, type PlannedColumn, planCell, settleCell } from './judge.js';
import { texts } from './texts.js';

const boundaries = new Map<string, Boundary>([
  ['codec', { id: 'codec', release: '0.3.7', reason: '0.3.7 brought the codec.' }],
  ['gate', { id: 'gate', release: '0.5.5', reason: '0.5.5 brought the gate.' }],
]);

const ours: PlannedColumn = { kind: 'ours', versions: { codemode: null } };
const remote: PlannedColumn = { kind: 'ours-remote', versions: { codemode: null } };
const at = (release: string): PlannedColumn => ({ kind: 'reference', versions: { codemode: release } });

const base: Case = { id: 'c', description: 'd', features: ['result'], code: 'async () => 1', expect: { result: 1 } };
const kinds = (item: Case, releases: string[]) =>
  releases.map((release) => planCell(item, at(release), boundaries).kind);
const outcome = (value: Outcome) => ({ kind: 'outcome' as const, outcome: value });

describe('planCell', () => {
  it('runs a flow on the reference releases that carry the runtime, except one whose workerd aborts under flows', () => {
    const flow = {
      id: 'f',
      description: 'd',
      features: ['runtime'],
      connectors: [],
      steps: [],
      file: 'cases/runtime-x.yaml',
      line: 1,
    } as unknown as Parameters<typeof planCell>[0];
    const withRuntime = new Map(boundaries).set('runtime', { id: 'runtime', release: '0.4.0', reason: 'r' });
    expect(
      ['0.3.8', '0.4.1', '0.4.4', '0.5.6'].map((release) => planCell(flow, at(release), withRuntime).kind),
    ).toEqual(['unsupported', 'run', 'unsupported', 'run']);
    // An infrastructure fault of the column, said as such: not "unsafe there".
    expect(planCell(flow, at('0.4.4'), withRuntime)).toMatchObject({
      label: 'infrastructure: workerd aborts here',
      reason: expect.stringMatching(/^an infrastructure fault of this column, not a behaviour of 0\.4\.4: /),
    });
  });

  it("skips a flow's reference columns on the other side of its skip entry's boundary, with the entry's steps", () => {
    const steps = [{ execute: 'x', expect: { value: 'new' } }];
    const flow = {
      ...{ id: 'f', description: 'd', features: ['runtime'], connectors: [], steps },
      skipOn: [{ before: 'gate', note: 'It gives the old value.', steps: [{ value: 'old' }] }],
    } as unknown as Parameters<typeof planCell>[0];
    const withRuntime = new Map(boundaries)
      .set('runtime', { id: 'runtime', release: '0.4.0', reason: 'r' })
      .set('runtime-calls-echo', { id: 'runtime-calls-echo', release: '0.4.3', reason: 'r' });
    expect(['0.4.1', '0.5.2', '0.5.5'].map((release) => planCell(flow, at(release), withRuntime).kind)).toEqual([
      'skip',
      'skip',
      'run',
    ]);
    expect(planCell(flow, at('0.5.2'), withRuntime)).toEqual({
      kind: 'skip',
      expect: {},
      upstream: false,
      reason: 'before gate (0.5.5): 0.5.5 brought the gate. It gives the old value.',
      label: 'before gate (0.5.5)',
      note: 'It gives the old value.',
      failsAsSteps: [{ value: 'old' }],
    });
    // A release before the call-log echo is judged without calls on its skipped side too.
    expect(planCell(flow, at('0.4.1'), withRuntime)).toMatchObject({ kind: 'skip', withoutCalls: true });
    expect(planCell(flow, ours, withRuntime)).toEqual({ kind: 'run', expect: {}, upstream: false });
  });

  it('runs a plain case everywhere, against its expect', () => {
    for (const column of [ours, remote, at('0.2.2'), at('0.5.6')])
      expect(planCell(base, column, boundaries)).toEqual({ kind: 'run', expect: { result: 1 }, upstream: false });
  });

  it('derives the skipped columns from their releases: before a boundary, or from it on', () => {
    const before: Case = { ...base, skipOn: [{ before: 'codec' }] };
    const from: Case = { ...base, skipOn: [{ from: 'codec' }] };
    expect(kinds(before, ['0.2.2', '0.3.6', '0.3.7', '0.3.8', '0.5.6'])).toEqual(['skip', 'skip', 'run', 'run', 'run']);
    expect(kinds(from, ['0.2.2', '0.3.6', '0.3.7', '0.3.8', '0.5.6'])).toEqual(['run', 'run', 'skip', 'skip', 'skip']);
    expect(kinds({ ...base, skipOn: [{ before: 'codec' }, { from: 'gate' }] }, ['0.2.2', '0.4.4', '0.5.5'])).toEqual([
      'skip',
      'run',
      'skip',
    ]);
  });

  it('never skips our columns, which follow no release', () => {
    const item: Case = { ...base, skipOn: [{ before: 'codec' }, { from: 'codec' }] };
    expect([planCell(item, ours, boundaries).kind, planCell(item, remote, boundaries).kind]).toEqual(['run', 'run']);
  });

  it('gives a skip the boundary reason written once, the label, the note, and how it fails', () => {
    const item: Case = { ...base, skipOn: [{ before: 'codec', note: 'Here it sends {}.', expect: { result: 0 } }] };
    expect(planCell(item, at('0.2.2'), boundaries)).toEqual({
      kind: 'skip',
      expect: { result: 1 },
      upstream: false,
      reason: 'before codec (0.3.7): 0.3.7 brought the codec. Here it sends {}.',
      label: 'before codec (0.3.7)',
      note: 'Here it sends {}.',
      failsAs: { result: 0 },
    });
  });

  it('judges a reference column by upstream.expect, and ours by expect', () => {
    const item: Case = { ...base, upstream: { expect: { result: 2 }, reason: 'we differ on purpose' } };
    expect(planCell(item, at('0.5.6'), boundaries)).toEqual({ kind: 'run', expect: { result: 2 }, upstream: true });
    expect(planCell(item, ours, boundaries)).toEqual({ kind: 'run', expect: { result: 1 }, upstream: false });
  });

  it('makes a reference cell unsupported when the program is unsafe there, or when the request builder refuses it', () => {
    const unsafe = planCell({ ...base, unsafeOnReference: 'a spin wedges wrangler dev' }, at('0.5.6'), boundaries);
    expect(unsafe).toEqual({
      kind: 'unsupported',
      reason: 'unsafe on the reference: a spin wedges wrangler dev',
      label: texts.cell.unsafeLabel,
    });
    const refused = planCell({ ...base, options: { countHostWaits: false } }, at('0.5.6'), boundaries);
    expect(refused).toMatchObject({ kind: 'unsupported', label: texts.cell.refusedLabel });
    expect(refused.kind === 'unsupported' && refused.reason).toMatch(
      /^Case "c" cannot be sent to a reference column: options\.countHostWaits: false/,
    );
    expect(planCell({ ...base, options: { countHostWaits: false } }, ours, boundaries).kind).toBe('run');
  });
});

describe('settleCell', () => {
  const run: Plan = { kind: 'run', expect: { result: 1 }, upstream: false };
  const skip = (failsAs?: Outcome): Plan => ({
    kind: 'skip',
    expect: { result: 1 },
    upstream: false,
    reason: 'before codec (0.3.7): why',
    label: 'before codec (0.3.7)',
    ...(failsAs ? { failsAs } : {}),
  });
  const item = { ...base, file: 'cases/x.yaml', line: 7 };

  it('passes an outcome that meets the expectation, and fails one that does not with the diff', () => {
    expect(settleCell(item, 'latest', run, outcome({ result: 1 }))).toEqual({
      case: 'c',
      column: 'latest',
      status: 'pass',
    });
    expect(settleCell(item, 'latest', run, outcome({ result: 2 }))).toEqual({
      case: 'c',
      column: 'latest',
      status: 'fail',
      reason: 'outcome differs from expect in result',
      diff: [
        'cases/x.yaml:7 (case "c") on latest does not meet expect',
        '  outcome: {"result":2}',
        '  result: expected 1, got 2',
      ].join('\n'),
    });
  });

  it('marks a cell judged by upstream.expect, and names it when it fails', () => {
    const upstream: Plan = { kind: 'run', expect: { result: 2 }, upstream: true };
    expect(settleCell(item, 'latest', upstream, outcome({ result: 2 }))).toEqual({
      case: 'c',
      column: 'latest',
      status: 'pass',
      expectation: 'upstream',
    });
    expect(settleCell(item, 'latest', upstream, outcome({ result: 1 }))).toMatchObject({
      status: 'fail',
      reason: 'outcome differs from upstream.expect in result',
    });
  });

  it('keeps a skip that still does not pass, and fails a skip that passes as stale', () => {
    expect(settleCell(item, '0.2.2', skip(), outcome({ result: 0 }))).toEqual({
      case: 'c',
      column: '0.2.2',
      status: 'skip',
      reason: 'before codec (0.3.7): why',
      label: 'before codec (0.3.7)',
    });
    expect(settleCell(item, '0.2.2', skip(), outcome({ result: 1 }))).toMatchObject({
      status: 'fail',
      unexpectedPass: true,
      reason: texts.cell.staleSkip('before codec (0.3.7): why'),
    });
  });

  it('holds a skip that says how it fails to that: the same failure passes, another one fails', () => {
    expect(settleCell(item, '0.2.2', skip({ result: 0 }), outcome({ result: 0 }))).toMatchObject({
      status: 'skip',
      expectation: 'skip',
    });
    expect(settleCell(item, '0.2.2', skip({ result: 0 }), outcome({ result: 9 }))).toMatchObject({
      status: 'fail',
      reason: 'outcome differs from the expect of its skip entry in result',
    });
    expect(settleCell(item, '0.2.2', skip({ result: 0 }), outcome({ result: 1 }))).toMatchObject({
      status: 'fail',
      unexpectedPass: true,
    });
  });

  it("holds a skipped flow to its entry's steps, and fails it as stale when it meets the flow's own", () => {
    const flow = {
      ...{ id: 'f', description: 'd', features: ['runtime'], connectors: [], file: 'cases/runtime-x.yaml', line: 3 },
      steps: [
        { execute: 'x', expect: { value: { status: 'completed', executionId: '<#1>', result: 'new', calls: [] } } },
      ],
    } as unknown as Parameters<typeof settleCell>[0];
    const flowSkip = (withoutCalls?: true, failsAsSteps = true): Plan => ({
      kind: 'skip',
      expect: {},
      upstream: false,
      reason: 'before gate (0.5.5): why',
      label: 'before gate (0.5.5)',
      ...(failsAsSteps
        ? { failsAsSteps: [{ value: { status: 'completed', executionId: '<#1>', result: 'old', calls: [] } }] }
        : {}),
      ...(withoutCalls ? { withoutCalls } : {}),
    });
    const gave = (result: string, calls = true) => ({
      kind: 'outcome' as const,
      outcome: {
        steps: [
          { value: { status: 'completed', executionId: '<#1>', result, ...(calls ? { calls: [] } : {}) }, ran: [] },
        ],
      },
    });
    expect(settleCell(flow, '0.5.1', flowSkip(), gave('old'))).toMatchObject({ status: 'skip', expectation: 'skip' });
    expect(settleCell(flow, '0.4.1', flowSkip(true), gave('old', false))).toMatchObject({
      status: 'skip',
      expectation: 'skip',
    });
    expect(settleCell(flow, '0.5.1', flowSkip(), gave('other'))).toMatchObject({
      status: 'fail',
      reason: 'outcome differs from the expect of its skip entry in steps',
    });
    expect(settleCell(flow, '0.5.1', flowSkip(), gave('new'))).toMatchObject({ status: 'fail', unexpectedPass: true });
    // Without steps, a skipped flow must merely not pass.
    expect(settleCell(flow, '0.5.1', flowSkip(undefined, false), gave('other'))).toMatchObject({
      status: 'skip',
    });
  });

  it('passes a harness break through as infra-error, and an unsupported plan with its reason', () => {
    expect(settleCell(item, 'latest', run, { kind: 'infra-error', reason: 'wrangler exited' })).toEqual({
      case: 'c',
      column: 'latest',
      status: 'infra-error',
      reason: 'wrangler exited',
    });
    expect(settleCell(item, 'latest', { kind: 'unsupported', reason: 'r', label: 'l' }, undefined)).toEqual({
      case: 'c',
      column: 'latest',
      status: 'unsupported',
      reason: 'r',
      label: 'l',
    });
    expect(() => settleCell(item, 'latest', run, undefined)).toThrow('ran but has no outcome');
  });
});
