/**
 * Smoke test of the reference columns: every column started once under real `wrangler dev`, and
 * behaviours that upstream-releases.md documents as differing between release lines observed on
 * the real DynamicWorkerExecutor of each. Then describeRequest's refusals, and the clean stop.
 */

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Case, CaseProvider, Outcome } from '../case-model.js';
import { runOnReference } from './client.js';
import { COLUMN_NAMES, type ColumnName, columnByName, WRANGLER_BIN } from './columns.js';
import { describeRequest } from './describe-request.js';
import { groupMembers } from './process-group.js';
import {
  type StartedReferenceColumn,
  startReferenceColumn,
  startReferenceColumns,
  stopReferenceColumns,
} from './wrangler.js';
import { startWranglerDev } from './wrangler-dev.js';

const HERE = dirname(fileURLToPath(import.meta.url));

function smokeCase(id: string, code: string, extra: Partial<Case> = {}): Case {
  return { id, description: id, features: [], code, ...extra };
}

const ADD_AND_ECHO: CaseProvider[] = [
  { tools: { add: { add: true }, echo: { echo: true }, inspect: { inspect: true } } },
];

describe('reference columns under wrangler dev', () => {
  let columns: StartedReferenceColumn[] = [];

  /** The case's outcome on every column, keyed by column name. */
  async function onEveryColumn(testCase: Case): Promise<Record<string, Outcome>> {
    const outcomes = await Promise.all(columns.map((column) => runOnReference(column, testCase)));
    return Object.fromEntries(columns.map((column, i) => [column.column.name, outcomes[i] as Outcome]));
  }

  /** The same expected outcome on each named column. */
  function same(names: readonly ColumnName[], outcome: Outcome): Record<string, Outcome> {
    return Object.fromEntries(names.map((name) => [name, outcome]));
  }

  beforeAll(async () => {
    columns = await startReferenceColumns(COLUMN_NAMES);
  }, 600_000);

  afterAll(async () => {
    await stopReferenceColumns(columns);
  }, 60_000);

  it('runs the release each column pins, and reads latest from what npm installed', () => {
    expect(
      columns.map((column) => [
        column.column.name,
        column.versions.codemode === column.column.pinned || column.column.name === 'latest',
      ]),
    ).toEqual(COLUMN_NAMES.map((name) => [name, true]));
    const latest = columns.find((column) => column.column.name === 'latest');
    expect(latest?.versions.codemode).toMatch(/^0\.5\.\d+$/); // The peer range is <0.6.0.
    for (const column of columns) {
      expect(column.versions.sandboxCompatibilityDate).toBe('2025-06-01'); // upstream-releases.md §10
      expect(column.versions.sandboxCompatibilityFlags).toEqual(['nodejs_compat']);
    }
  });

  it('passes only the first argument on 0.2.2 and spreads them from 0.3.8 (§2.1)', async () => {
    const outcomes = await onEveryColumn(
      smokeCase('smoke-args', 'async () => [await codemode.add(20, 22), await codemode.echo(1, 2)]', {
        providers: ADD_AND_ECHO,
      }),
    );
    expect(outcomes).toEqual({
      '0.2.2': { result: [20, [1]], logs: [] },
      ...same(['0.3.8', '0.4.4', 'latest'], { result: [42, [1, 2]], logs: [] }),
    });
  });

  it('carries a Uint8Array argument natively only once the binary codec arrived (§5)', async () => {
    const outcomes = await onEveryColumn(
      smokeCase('smoke-codec', 'async () => codemode.inspect(new Uint8Array([1, 2]))', { providers: ADD_AND_ECHO }),
    );
    expect(outcomes).toEqual({
      '0.2.2': { result: [{ type: 'object', tag: 'Object', value: { 0: 1, 1: 2 } }], logs: [] },
      ...same(['0.3.8', '0.4.4', 'latest'], {
        result: [{ type: 'object', tag: 'Uint8Array', value: [1, 2] }],
        logs: [],
      }),
    });
  });

  it('detects a sanitize collision from 0.3.8, while on 0.2.2 the last tool wins (§4)', async () => {
    const collision = smokeCase('smoke-collision', 'async () => codemode.a_b()', {
      providers: [{ tools: { 'a-b': { returns: 'first' }, a_b: { returns: 'second' } } }],
    });
    expect(await onEveryColumn(collision)).toEqual({
      '0.2.2': { result: 'second', logs: [] },
      ...same(['0.3.8', '0.4.4', 'latest'], {
        error: 'Tool names "a-b" and "a_b" both sanitize to "a_b" in provider "codemode"',
      }),
    });
  });

  it('reserves __connectors from 0.4.4 only (§3)', async () => {
    const reserved = smokeCase('smoke-reserved', 'async () => 1', { providers: [{ name: '__connectors', tools: {} }] });
    expect(await onEveryColumn(reserved)).toEqual({
      ...same(['0.2.2', '0.3.8'], { result: 1, logs: [] }),
      ...same(['0.4.4', 'latest'], { error: 'Provider name "__connectors" is reserved' }),
    });
  });

  it('reaches connectors over RPC from 0.4.4, first argument only, with the pause marker (§2.1, §6.3)', async () => {
    const connectors = smokeCase(
      'smoke-connectors',
      'async () => { const echoed = await api.ping(1, 2); await api.halt(); return echoed }',
      {
        options: { connectors: [{ name: 'api', tools: { ping: { echo: true }, halt: { pause: true } } }] },
      },
    );
    expect(await onEveryColumn(connectors)).toEqual({
      ...same(['0.2.2', '0.3.8'], { error: 'api is not defined', logs: [] }),
      ...same(['0.4.4', 'latest'], { error: '__CODEMODE_PAUSE__', logs: [] }),
    });
    const echoed = smokeCase('smoke-connector-args', 'async () => api.ping(1, 2)', {
      options: { connectors: [{ name: 'api', tools: { ping: { echo: true } } }] },
    });
    const outcomes = await onEveryColumn(echoed);
    expect([outcomes['0.4.4'], outcomes.latest]).toEqual([
      { result: [1], logs: [] },
      { result: [1], logs: [] },
    ]);
  });

  it('captures console.warn as "[warn] 1" and leaves console.info out, on every line (§9)', async () => {
    const outcomes = await onEveryColumn(
      smokeCase('smoke-console', 'async () => { console.warn(1); console.info(2); console.log({ a: 1 }) }'),
    );
    expect(outcomes).toEqual(same(COLUMN_NAMES, { logs: ['[warn] 1', '[object Object]'] }));
  });

  it('returns a throw crossing execute as threw, without failing the request (§12)', async () => {
    const outcomes = await onEveryColumn(smokeCase('smoke-throw-null', 'async () => { throw null }'));
    expect(outcomes).toEqual(same(COLUMN_NAMES, { threw: "Cannot read properties of null (reading 'message')" }));
  });

  it('honours bareRecord, the timeout, the module map and a blocked outbound', async () => {
    const bare = await onEveryColumn(
      smokeCase('smoke-bare', 'async () => typeof codemode', { options: { bareRecord: true } }),
    );
    const array = await onEveryColumn(smokeCase('smoke-array', 'async () => typeof codemode')); // §1: [] creates no namespace.
    expect([bare, array]).toEqual([
      same(COLUMN_NAMES, { result: 'object', logs: [] }),
      same(COLUMN_NAMES, { result: 'undefined', logs: [] }),
    ]);

    const timeout = smokeCase(
      'smoke-timeout',
      'async () => { await new Promise((r) => setTimeout(r, 5000)); return 1 }',
      { options: { timeout: 50 } },
    );
    expect(await onEveryColumn(timeout)).toEqual(same(COLUMN_NAMES, { error: 'Execution timed out', logs: [] }));

    const modules = smokeCase('smoke-modules', 'async () => (await import("lib.js")).x + 1', {
      options: { modules: { 'lib.js': 'export const x = 41' } },
    });
    expect(await onEveryColumn(modules)).toEqual(same(COLUMN_NAMES, { result: 42, logs: [] }));

    const blocked = smokeCase(
      'smoke-blocked',
      'async () => { try { await fetch("http://127.0.0.1:9/") } catch (e) { return String(e) } }',
      {
        options: { outbound: 'blocked' },
      },
    );
    const outcomes = await onEveryColumn(blocked);
    for (const name of COLUMN_NAMES)
      expect(outcomes[name]?.result).toMatch(
        /^Error: This worker is not permitted to access the internet via global functions like fetch\(\)/,
      );
  });

  it('answers a bad body with a non-200 naming what was wrong', async () => {
    const [column] = columns;
    const response = await fetch(column!.url, {
      method: 'POST',
      body: JSON.stringify({ code: 'async () => 1', providers: [] }),
    });
    expect([response.status, await response.text()]).toEqual([
      400,
      'Bad reference request body: caseId must be a string',
    ]);
  });

  // Runs last (vitest runs a file's tests in order): it stops the columns the tests above used.
  it('stops every column with its whole process tree, workerd included', async () => {
    for (const column of columns) {
      const commands = groupMembers(column.processGroup).map((member) => member.command);
      expect(commands.some((command) => /\bworkerd\b.*\bserve\b/.test(command))).toBe(true); // The check below would be empty otherwise.
    }
    await stopReferenceColumns(columns);
    expect(columns.map((column) => groupMembers(column.processGroup))).toEqual(columns.map(() => []));
    await expect(columns[0]!.run(describeRequest(smokeCase('smoke-after-stop', 'async () => 1')))).rejects.toThrow(
      'Reference column 0.2.2 has been stopped',
    );
  });
});

describe('start failures', () => {
  it('names an unknown column and the known ones', async () => {
    await expect(startReferenceColumn('0.9.9')).rejects.toThrow(
      'Unknown reference column "0.9.9"; the columns are "0.2.2", "0.3.8", "0.4.4", "latest"',
    );
  });

  it('reports a wrangler that exits before it is ready, with its output', async () => {
    const start = startWranglerDev({
      label: 'bogus',
      wranglerBin: WRANGLER_BIN,
      configPath: join(HERE, 'no-such-config.json'),
      readyTimeoutMs: 120_000,
    });
    await expect(start).rejects.toThrow(
      /^wrangler dev for reference column bogus exited before it was ready \(code 1, signal null\)\. Its output:\n[\s\S]*no-such-config\.json/,
    );
  });

  it('reports a wrangler that is not ready in time, with its output', async () => {
    const start = startWranglerDev({
      label: 'impatient',
      wranglerBin: WRANGLER_BIN,
      configPath: columnByName('latest').configPath,
      readyTimeoutMs: 50,
    });
    await expect(start).rejects.toThrow(
      'wrangler dev for reference column impatient printed no "Ready on http://..." line within 50 ms. Its output:',
    );
  });
});

describe('describeRequest refuses what the reference wire cannot represent, naming the case', () => {
  const refusals: [string, Case][] = [
    [
      'a host function answering fetch',
      smokeCase('refuse-respond', 'async () => 1', { options: { outbound: { respond: { body: 'x' } } } }),
    ],
    ['countHostWaits: false', smokeCase('refuse-host-waits', 'async () => 1', { options: { countHostWaits: false } })],
    [
      'proxySource',
      smokeCase('refuse-proxy-source', 'async () => 1', {
        providers: [{ name: 'api', tools: {}, proxySource: '(call) => ({})' }],
      }),
    ],
    [
      'reference: false',
      smokeCase('refuse-reference-false', 'async () => 1', { reference: false, reason: 'a spinning loop' }),
    ],
    [
      'a bare record of two providers',
      smokeCase('refuse-bare-two', 'async () => 1', {
        providers: [{ tools: {} }, { name: 'b', tools: {} }],
        options: { bareRecord: true },
      }),
    ],
    [
      'a bare record with positionalArgs',
      smokeCase('refuse-bare-positional', 'async () => 1', {
        providers: [{ tools: {}, positionalArgs: true }],
        options: { bareRecord: true },
      }),
    ],
    [
      'a module that is not source text',
      smokeCase('refuse-module-kind', 'async () => 1', { options: { modules: { 'data.json': { json: { a: 1 } } } } }),
    ],
    [
      'an option the wire does not know',
      smokeCase('refuse-unknown-option', 'async () => 1', { options: { retainHandles: true } as never }),
    ],
    [
      'a provider field the wire does not know',
      smokeCase('refuse-unknown-provider-field', 'async () => 1', { providers: [{ tools: {}, types: 'x' } as never] }),
    ],
  ];

  it.each(refusals)('refuses %s', (_what, testCase) => {
    expect(() => describeRequest(testCase)).toThrow(`Case "${testCase.id}" cannot be sent to a reference column: `);
  });

  it('states the reason for each refusal', () => {
    const message = (testCase: Case) => {
      try {
        describeRequest(testCase);
        return 'not refused';
      } catch (error) {
        return (error as Error).message.replace(/^Case "[^"]+" cannot be sent to a reference column: /, '');
      }
    };
    expect(refusals.slice(0, 4).map(([, testCase]) => message(testCase))).toEqual([
      'options.outbound.respond: the reference wire has no field for a host function answering fetch',
      'options.countHostWaits: false: the reference clock is always wall-clock time (DynamicWorkerExecutor has no such option)',
      `providers["api"].proxySource: upstream ResolvedProvider has no field for a provider's own proxy source`,
      'it is marked reference: false (a spinning loop), so no reference column may run it',
    ]);
  });

  it('carries what it can: wall-clock countHostWaits, a blocked outbound, connectors, modules, timeout', () => {
    const testCase = smokeCase('carry', 'async () => 1', {
      providers: [{ name: 'api', tools: { a: { echo: true } }, positionalArgs: true, prelude: 'api.x = 1' }],
      options: {
        countHostWaits: true,
        outbound: 'blocked',
        connectors: [{ name: 'c', tools: { t: { returns: 1 } } }],
        modules: { 'lib.js': 'export const x = 1' },
        timeout: 250,
      },
    });
    expect(describeRequest(testCase)).toEqual({
      caseId: 'carry',
      code: 'async () => 1',
      providers: [{ name: 'api', tools: { a: { echo: true } }, positionalArgs: true, prelude: 'api.x = 1' }],
      globalOutbound: 'blocked',
      connectors: [{ name: 'c', tools: { t: { returns: 1 } } }],
      modules: { 'lib.js': 'export const x = 1' },
      timeout: 250,
    });
  });
});
