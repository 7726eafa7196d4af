/**
 * replay's own check of a stored record (src/record/record-shape.ts) and the record's JSON Schema
 * give the same verdict, record by record: the check is the schema written out as code.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { runRecordProblem } from '../../src/record/record-shape.js';

const schema = JSON.parse(readFileSync(new URL('../../schema/run-record.schema.json', import.meta.url), 'utf8'));
const validate = new Ajv2020({ strict: true, strictRequired: false }).compile(schema);

const RECORD = {
  format: 'codemode-run-record',
  schemaVersion: 1,
  request: {
    code: 'async () => 1',
    providers: [{ name: 'db', tools: ['query'], positionalArgs: true, proxySource: '(c) => ({})', prelude: '' }],
    modules: { 'a.js': 'export default 1', b: { js: 'x' }, c: { cjs: 'y' }, d: { text: 't' }, e: { json: { k: [1] } } },
    timeout: null,
    cpuTimeout: 100,
    countHostWaits: true,
  },
  calls: [
    { provider: 'db', tool: 'query', args: ['x', { n: 1 }], result: [1, null], startMs: 0, durationMs: 2 },
    { provider: 'db', tool: 'query', args: [], error: 'no', rejected: true, startMs: 3 },
  ],
  logs: [{ level: 'log', message: 'hi' }],
  outcome: { result: { ok: true }, error: 'e', rejected: { message: 'm', code: 'EXECUTION_CANCELLED' } },
  timing: { startedAt: '2026-12-05T03:00:00.000Z', wallMs: 5 },
  truncated: { maxBytes: 10, droppedCalls: 0, droppedLogs: 1, droppedResult: false, text: 'cut' },
};

type Damage = (record: any) => void;

const DAMAGES: Record<string, Damage> = {
  'nothing wrong': () => {},
  format: (r) => (r.format = 'other'),
  schemaVersion: (r) => (r.schemaVersion = 2),
  'request missing': (r) => delete r.request,
  'request.code a number': (r) => (r.request.code = 1),
  'a provider null': (r) => (r.request.providers = [null]),
  'a provider with an extra field': (r) => (r.request.providers[0].extra = 1),
  'tools of numbers': (r) => (r.request.providers[0].tools = [1]),
  'positionalArgs a string': (r) => (r.request.providers[0].positionalArgs = 'yes'),
  'a module a number': (r) => (r.request.modules['a.js'] = 1),
  'a module {js} with another key': (r) => (r.request.modules.b = { js: 'x', wasm: 'y' }),
  'timeout a string': (r) => (r.request.timeout = '5'),
  'request with retainHandles': (r) => (r.request.retainHandles = true),
  'calls not an array': (r) => (r.calls = {}),
  'a call without args': (r) => delete r.calls[0].args,
  'a call rejected false': (r) => (r.calls[1].rejected = false),
  'a negative startMs': (r) => (r.calls[0].startMs = -1),
  'a log level a number': (r) => (r.logs[0].level = 1),
  'outcome null': (r) => (r.outcome = null),
  'outcome.rejected without message': (r) => (r.outcome.rejected = { code: 'X' }),
  'timing without wallMs': (r) => delete r.timing.wallMs,
  'truncated null': (r) => (r.truncated = null),
  'truncated.maxBytes 0.5': (r) => (r.truncated.maxBytes = 0.5),
  'a field of its own': (r) => (r.mine = 1),
};

describe("replay's record check and the schema", () => {
  for (const [name, damage] of Object.entries(DAMAGES)) {
    it(`agree on a record with ${name}`, () => {
      const record = structuredClone(RECORD);
      damage(record);
      const schemaSays = validate(record);
      const problem = runRecordProblem(record);
      expect(problem === undefined, problem ?? 'no problem found').toBe(schemaSays);
      if (name === 'nothing wrong') expect(problem).toBeUndefined();
    });
  }
});
