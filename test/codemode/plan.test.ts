/** The plan, the descriptors and the connector control markers. */
import { describe, expect, it } from 'vitest';
import { describeProvider, planExecution, readControlMarker } from '../../src/codemode/plan.js';
import type { ConnectorBinding, ExtendedProvider } from '../../src/codemode/types.js';
import { ToolNotFoundError } from '../../src/protocol/errors.js';

const provider = (name: string, fns: ExtendedProvider['fns'] = {}): ExtendedProvider => ({ name, fns });
const connector = (
  name: string,
  callTool: ConnectorBinding['binding']['callTool'] = () => undefined,
): ConnectorBinding => ({
  name,
  binding: { callTool },
});

describe('planExecution', () => {
  it('keys each function under its sanitized identifier and turns down everything else', async () => {
    const listIssues = (...args: unknown[]) => ({ listed: args });
    const { descriptors, handlers } = planExecution([provider('gh', { 'list-issues': listIssues })], []);
    expect(descriptors).toStrictEqual([{ name: 'gh', tools: ['list_issues'] }]);
    expect(await handlers.gh!('list_issues', [{ repo: 'x' }, 2])).toEqual({ listed: [{ repo: 'x' }, 2] });
    expect(() => handlers.gh!('list-issues', [])).toThrow(ToolNotFoundError);
    expect(() => handlers.gh!('list-issues', [])).toThrow('Tool "list-issues" not found');
    expect(() => handlers.gh!('constructor', [])).toThrow('Tool "constructor" not found');
  });

  it('lets the later key win where upstream does ("" then _)', async () => {
    const { descriptors, handlers } = planExecution([provider('p', { '': () => 'empty', _: () => 'underscore' })], []);
    expect(descriptors[0]!.tools).toEqual(['_']);
    expect(await handlers.p!('_', [])).toBe('underscore');
  });

  it('describes a connector with no tools and calls it with the first argument only', async () => {
    const received: unknown[] = [];
    const crm = connector('crm', (method, args) => (received.push([method, args]), 'done'));
    const { descriptors, handlers } = planExecution([], [crm]);
    expect(descriptors).toStrictEqual([{ name: 'crm', tools: [] }]);
    expect(await handlers.crm!('lookup', [{ id: 1 }, 'second'])).toBe('done');
    expect(received).toEqual([['lookup', { id: 1 }]]);
  });

  it('keeps a handler for a provider named __proto__ as an own key', () => {
    const { handlers } = planExecution([provider('__proto__', { t: () => 1 })], []);
    expect(Object.hasOwn(handlers, '__proto__')).toBe(true);
  });
});

describe('describeProvider', () => {
  it('copies each optional member only when it is defined', () => {
    expect(describeProvider(provider('a'), [])).toStrictEqual({ name: 'a', tools: [] });
    expect(
      describeProvider({ name: 'a', fns: {}, positionalArgs: undefined, proxySource: undefined, prelude: undefined }, [
        't',
      ]),
    ).toStrictEqual({ name: 'a', tools: ['t'] });
    expect(
      describeProvider(
        { name: 'a', fns: {}, positionalArgs: false, proxySource: '(call) => ({})', prelude: 'a.x = 1' },
        [],
      ),
    ).toStrictEqual({ name: 'a', tools: [], positionalArgs: false, proxySource: '(call) => ({})', prelude: 'a.x = 1' });
  });
});

describe('readControlMarker', () => {
  it('throws __CODEMODE_PAUSE__ for the pause marker', () => {
    expect(() => readControlMarker({ __codemode_control__: 'pause' })).toThrow(new Error('__CODEMODE_PAUSE__'));
  });

  it("throws the error marker's message, stringified", () => {
    expect(() => readControlMarker({ __codemode_control__: 'error', message: 'vendor said no' })).toThrow(
      new Error('vendor said no'),
    );
    expect(() => readControlMarker({ __codemode_control__: 'error', message: 42 })).toThrow(new Error('42'));
    expect(() => readControlMarker({ __codemode_control__: 'error' })).toThrow(new Error('undefined'));
  });

  it('returns anything else unchanged', () => {
    const other = { __codemode_control__: 'resume', data: 1 };
    expect(readControlMarker(other)).toBe(other);
    for (const value of [null, undefined, 0, '', 'pause', [1], { result: 1 }])
      expect(readControlMarker(value)).toBe(value);
  });
});
