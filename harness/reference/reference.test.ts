/**
 * The reference columns as infrastructure: the pins, one column started under real `wrangler dev`
 * and stopped with its process tree, the start failures, and describeRequest's refusals. What each
 * release does is the catalogue's job (harness/catalogue), which runs every column.
 */

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Case } from '../case-model.js';
import { REFERENCE_COLUMNS, referenceConfig, referenceVersions } from '../columns.js';
import { groupMembers } from '../processes.js';
import { describeRequest } from './request.js';
import { type ReferenceColumn, startReferenceColumn, startWranglerDev } from './wrangler.js';

const HERE = dirname(fileURLToPath(import.meta.url));

function smokeCase(id: string, code: string, extra: Partial<Case> = {}): Case {
  return { id, description: id, features: [], code, expect: { result: { any: true } }, ...extra };
}

describe('a reference column under wrangler dev', () => {
  let column: ReferenceColumn | undefined;

  beforeAll(async () => {
    column = await startReferenceColumn('0.4.1');
  }, 300_000);

  afterAll(async () => {
    await column?.stop();
  }, 60_000);

  it('each column pins its release through its npm alias, and latest reads what npm installed', () => {
    const versions = REFERENCE_COLUMNS.map((name) => ({ name, ...referenceVersions(name) }));
    expect(versions.map((entry) => [entry.name, entry.codemode === entry.name || entry.name === 'latest'])).toEqual(
      REFERENCE_COLUMNS.map((name) => [name, true]),
    );
    expect(versions.find((entry) => entry.name === 'latest')?.codemode).toMatch(/^0\.5\.\d+$/); // The peer range is <0.6.0.
    for (const entry of versions) {
      expect(entry.compatibilityDate).toBe('2025-06-01');
      expect(entry.compatibilityFlags).toEqual(['nodejs_compat']);
    }
    expect(column?.versions.codemode).toBe('0.4.1');
  });

  it('answers a case, and a bad body with a 400 naming what was wrong', async () => {
    expect(await column!.run(describeRequest(smokeCase('smoke', 'async () => 6 * 7')))).toEqual({
      result: 42,
      logs: [],
    });
    const response = await fetch(column!.url, {
      method: 'POST',
      body: JSON.stringify({ code: 'async () => 1', providers: [] }),
    });
    expect([response.status, await response.text()]).toEqual([
      400,
      'Bad reference request body: caseId must be a string',
    ]);
    const badLimit = await fetch(column!.url, {
      method: 'POST',
      body: JSON.stringify({ caseId: 'bad-limit', code: 'async () => 1', providers: [], loaderCpuMs: 0 }),
    });
    expect([badLimit.status, await badLimit.text()]).toEqual([
      400,
      'Bad reference request body: loaderCpuMs must be a positive integer',
    ]);
  });

  // Runs last (vitest runs a file's tests in order): it stops the column the tests above used.
  it('stops with its whole process tree, workerd included', async () => {
    const commands = groupMembers(column!.processGroup).map((member) => member.command);
    expect(commands.some((command) => /\bworkerd\b.*\bserve\b/.test(command))).toBe(true); // The check below would be empty otherwise.
    // Its local state lives in a directory of its own, not beside the configuration every column shares.
    const state = /--persist-to (\S+)/.exec(commands.find((command) => command.includes('--persist-to')) ?? '')?.[1];
    expect(state).toMatch(/codemode-reference-state-/);
    expect(existsSync(state!)).toBe(true);
    await column!.stop();
    expect(groupMembers(column!.processGroup)).toEqual([]);
    expect(existsSync(state!)).toBe(false);
    await expect(column!.run(describeRequest(smokeCase('smoke-after-stop', 'async () => 1')))).rejects.toThrow(
      'Reference column 0.4.1 has been stopped',
    );
  });
});

describe('start failures', () => {
  it('names an unknown column and the known ones', async () => {
    await expect(startReferenceColumn('0.9.9')).rejects.toThrow(
      'Unknown reference column "0.9.9"; the columns are "0.2.2", "0.3.8", "0.4.1", "0.4.4", "latest"',
    );
  });

  it('reports a wrangler that exits before it is ready, with its output', async () => {
    const start = startWranglerDev('bogus', join(HERE, 'no-such-config.json'), 120_000);
    await expect(start).rejects.toThrow(
      /^wrangler dev for reference column bogus exited before it was ready \(code 1, signal null\)\. Its output:\n[\s\S]*no-such-config\.json/,
    );
  });

  it('reports a wrangler that is not ready in time, with its output', async () => {
    const start = startWranglerDev('impatient', referenceConfig('latest'), 50);
    await expect(start).rejects.toThrow(
      'wrangler dev for reference column impatient printed no "Ready on http://..." line within 50 ms. Its output:',
    );
  });
});

describe('describeRequest refuses what the reference wire cannot represent, naming the case', () => {
  const refusals: [string, Case][] = [
    ['countHostWaits: false', smokeCase('refuse-host-waits', 'async () => 1', { options: { countHostWaits: false } })],
    [
      'proxySource',
      smokeCase('refuse-proxy-source', 'async () => 1', {
        providers: [{ name: 'api', tools: {}, proxySource: '(call) => ({})' }],
      }),
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
    expect(refusals.slice(0, 2).map(([, testCase]) => message(testCase))).toEqual([
      'options.countHostWaits: false: the reference clock is always wall-clock time (DynamicWorkerExecutor has no such option)',
      `providers["api"].proxySource: upstream ResolvedProvider has no field for a provider's own proxy source`,
    ]);
  });

  it('carries what it can: wall-clock countHostWaits, a blocked outbound, connectors, modules of every kind, timeout, loaderCpuMs, recordCalls', () => {
    const testCase = smokeCase('carry', 'async () => 1', {
      providers: [{ name: 'api', tools: { a: { echo: true } }, positionalArgs: true, prelude: 'api.x = 1' }],
      options: {
        countHostWaits: true,
        outbound: 'blocked',
        connectors: [{ name: 'c', tools: { t: { returns: 1 } } }],
        modules: { 'lib.js': 'export const x = 1', 'data.json': { json: { a: 1 } } },
        timeout: 250,
        loaderCpuMs: 10,
        recordCalls: true,
      },
    });
    expect(describeRequest(testCase)).toEqual({
      caseId: 'carry',
      code: 'async () => 1',
      providers: [{ name: 'api', tools: { a: { echo: true } }, positionalArgs: true, prelude: 'api.x = 1' }],
      globalOutbound: 'blocked',
      connectors: [{ name: 'c', tools: { t: { returns: 1 } } }],
      modules: { 'lib.js': 'export const x = 1', 'data.json': { json: { a: 1 } } },
      timeout: 250,
      loaderCpuMs: 10,
      recordCalls: true,
    });
  });

  it('carries a host function answering fetch as the response a Fetcher of the worker gives', () => {
    const testCase = smokeCase('carry-respond', 'async () => 1', {
      options: { outbound: { respond: { status: 404, body: 'x', headers: { a: 'b' } } } },
    });
    expect(describeRequest(testCase).globalOutbound).toEqual({ status: 404, body: 'x', headers: { a: 'b' } });
  });
});
