/**
 * An outbound fetch's Request and Response as plain data for capnweb, and back: what crosses is
 * what the sandbox sent and what the outbound function answered, bodies and null bodies kept apart.
 */
import { describe, expect, it } from 'vitest';
import { requestFromWire, requestToWire, responseFromWire, responseToWire } from '../../src/wire/fetch-shape.js';
import { formatOutboundStatus } from '../../src/wire/texts.js';

describe('an outbound request on the wire', () => {
  it('carries method, URL, headers and body, and is rebuilt the same', async () => {
    const original = new Request('https://example.test/path?q=1', {
      method: 'PUT',
      headers: { 'x-one': '1', 'content-type': 'text/plain' },
      body: 'payload',
    });
    const wire = await requestToWire(original);
    expect(wire).toEqual({
      url: 'https://example.test/path?q=1',
      method: 'PUT',
      headers: [
        ['content-type', 'text/plain'],
        ['x-one', '1'],
      ],
      body: new TextEncoder().encode('payload'),
    });
    const rebuilt = requestFromWire(wire);
    expect([rebuilt.method, rebuilt.url, rebuilt.headers.get('x-one'), await rebuilt.text()]).toEqual([
      'PUT',
      'https://example.test/path?q=1',
      '1',
      'payload',
    ]);
  });

  it('keeps a GET bodiless, and tells no body from an empty one', async () => {
    expect((await requestToWire(new Request('https://example.test/'))).body).toBeNull();
    expect((await requestToWire(new Request('https://example.test/', { method: 'POST', body: '' }))).body).toEqual(
      new Uint8Array(),
    );
    // A GET that claims a body on the wire is rebuilt without one rather than refused.
    const rebuilt = requestFromWire({
      url: 'https://example.test/',
      method: 'GET',
      headers: [],
      body: new Uint8Array([1]),
    });
    expect(rebuilt.body).toBeNull();
  });
});

describe('an outbound response on the wire', () => {
  it('carries status, text, headers and body, and is rebuilt the same', async () => {
    const wire = await responseToWire(
      new Response('hello', { status: 201, statusText: 'Made', headers: { 'x-two': '2' } }),
    );
    expect(wire).toMatchObject({ status: 201, statusText: 'Made', body: new TextEncoder().encode('hello') });
    expect(wire.headers).toContainEqual(['x-two', '2']);
    const rebuilt = responseFromWire(wire);
    expect([rebuilt.status, rebuilt.statusText, rebuilt.headers.get('x-two'), await rebuilt.text()]).toEqual([
      201,
      'Made',
      '2',
      'hello',
    ]);
  });

  it('rebuilds a null-body status without its body', () => {
    for (const status of [204, 205, 304]) {
      expect(responseFromWire({ status, statusText: '', headers: [], body: new Uint8Array([1]) }).body).toBeNull();
    }
  });

  it('refuses a status that cannot cross, naming it', async () => {
    const informational = { status: 101 } as Response;
    await expect(responseToWire(informational)).rejects.toThrow(formatOutboundStatus(101));
  });
});
