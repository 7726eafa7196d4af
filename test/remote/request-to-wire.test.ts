/**
 * The client's wire objects. capnweb keeps a property set to undefined as a present key, so these
 * check the keys themselves: only what the caller set, or a connection default, goes on the wire.
 */
import { describe, expect, it } from 'vitest';
import { ExecutorError } from '../../src/protocol/index.js';
import { decodeValue } from '../../src/protocol/value-codec.js';
import { resolveConnectOptions } from '../../src/remote/connect-options.js';
import { executeRequestToWire, invokeRequestToWire } from '../../src/remote/request-to-wire.js';

const none = resolveConnectOptions({}).defaults;

describe('executeRequestToWire', () => {
  it('sends code, a null dispatch and the default outbound mode, and no key the caller left undefined', () => {
    const wire = executeRequestToWire(
      { code: 'async () => 1', timeout: undefined, modules: undefined, retainHandles: undefined },
      none,
    );
    expect(Object.keys(wire).sort()).toEqual(['code', 'dispatch', 'outboundMode']);
    expect(wire).toEqual({ code: 'async () => 1', dispatch: null, outboundMode: 'default' });
  });

  it('keeps a null timeout as a value, and blocked outbound as a mode', () => {
    const wire = executeRequestToWire({ code: 'c', timeout: null, outbound: null }, none);
    expect(wire).toEqual({ code: 'c', dispatch: null, outboundMode: 'blocked', timeout: null });
  });

  it('attaches the outbound function for the stub mode alone', () => {
    const wire = executeRequestToWire({ code: 'c', outbound: () => new Response('x') }, none);
    expect(wire.outboundMode).toBe('stub');
    expect(typeof wire.outbound).toBe('function');
  });

  it('lets a defined request field win over the connection default, which fills the rest', () => {
    const defaults = resolveConnectOptions({ timeout: 500, countHostWaits: true, outbound: null }).defaults;
    expect(executeRequestToWire({ code: 'c', timeout: 900, countHostWaits: false }, defaults)).toEqual({
      code: 'c',
      dispatch: null,
      outboundMode: 'blocked',
      timeout: 900,
      countHostWaits: false,
    });
    expect(executeRequestToWire({ code: 'c' }, defaults)).toMatchObject({ timeout: 500, countHostWaits: true });
    expect(executeRequestToWire({ code: 'c', timeout: null }, defaults).timeout).toBeNull();
  });

  it('carries cpuTimeout when the request sets it, and no key otherwise', () => {
    expect(executeRequestToWire({ code: 'c', cpuTimeout: 150 }, none)).toEqual({
      code: 'c',
      dispatch: null,
      outboundMode: 'default',
      cpuTimeout: 150,
    });
    expect(Object.keys(executeRequestToWire({ code: 'c', cpuTimeout: undefined }, none))).not.toContain('cpuTimeout');
  });

  it('refuses an outbound that is neither a function, null nor undefined', () => {
    const error = (() => {
      try {
        executeRequestToWire({ code: 'c', outbound: 'https://x' as never }, none);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ExecutorError);
    expect(error).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'outbound must be a function, null or undefined, got "https://x"',
    });
  });
});

describe('invokeRequestToWire', () => {
  it('sends only what was set, with the arguments through the value codec', () => {
    const wire = invokeRequestToWire({ executionId: 'e', handle: 'h', args: [new Set([1])] }, none);
    expect(Object.keys(wire).sort()).toEqual(['args', 'dispatch', 'executionId', 'handle']);
    expect(decodeValue(wire.args)).toEqual([new Set([1])]);
  });

  it('carries cpuTimeout when the call sets it', () => {
    const wire = invokeRequestToWire({ executionId: 'e', handle: 'h', cpuTimeout: 75 }, none);
    expect(wire).toEqual({ executionId: 'e', handle: 'h', dispatch: null, cpuTimeout: 75 });
  });
});

describe('the cancel token', () => {
  it('goes on the wire only for a call that has a signal', () => {
    expect(executeRequestToWire({ code: 'c' }, none, { cancelToken: '7' })).toEqual({
      code: 'c',
      dispatch: null,
      outboundMode: 'default',
      cancelToken: '7',
    });
    expect(Object.keys(executeRequestToWire({ code: 'c' }, none, {}))).not.toContain('cancelToken');
    expect(
      invokeRequestToWire({ executionId: 'e', handle: 'h' }, none, { cancelToken: '8', heartbeatLease: 900 }),
    ).toEqual({
      executionId: 'e',
      handle: 'h',
      dispatch: null,
      cancelToken: '8',
      heartbeatLease: 900,
    });
    expect(Object.keys(invokeRequestToWire({ executionId: 'e', handle: 'h' }, none))).not.toContain('cancelToken');
  });
});
