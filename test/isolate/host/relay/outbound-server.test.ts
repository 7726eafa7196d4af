/**
 * The host's end of the outbound relay, spoken to over its Unix socket as the supervisor speaks:
 * one POST whose body is a relay frame, proved by the relay's token and naming its run. Each
 * refusal is a failure frame the sandbox's `fetch` rejects with, never an exception on the host.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RelayRequestHead, relayCodec } from '../../../../src/isolate/contract/relay-frame.js';
import { OutboundServer } from '../../../../src/isolate/host/relay/outbound-server.js';
import { isolateText } from '../../../../src/isolate/host/texts.js';
import { COMPLETED_MESSAGE } from '../../../../src/protocol/texts.js';

const MAX_BODY = 1024;

interface Posted {
  status: number;
  body: Buffer;
}

/**
 * One POST to the relay's socket, as the supervisor sends it; `chunked` leaves its length
 * undeclared, so only the bytes read can tell the relay how big it is.
 */
function post(socketPath: string, headers: Record<string, string>, body: Uint8Array, chunked = false): Promise<Posted> {
  return new Promise((resolve, reject) => {
    const length = chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': body.byteLength };
    const outgoing = httpRequest(
      { socketPath, path: '/', method: 'POST', headers: { ...headers, ...length } },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, body: Buffer.concat(chunks) }));
        incoming.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    // The relay answers an oversized frame without reading the rest, so the rest of the write may
    // meet a closed socket after the answer came: that EPIPE is the refusal working, not a fault.
    outgoing.on('socket', (socket) => socket.on('error', () => {}));
    outgoing.end(body);
  });
}

function requestFrame(head: Partial<RelayRequestHead> = {}, body = new Uint8Array()): Uint8Array {
  return relayCodec.encodeRequest(
    { url: 'https://example.test/thing', method: 'GET', headers: [], nullBody: body.byteLength === 0, ...head },
    body,
  );
}

function replyOf(posted: Posted) {
  expect(posted.status).toBe(200);
  const reply = relayCodec.decodeReply(posted.body);
  if (reply === null) throw new Error(`not a reply frame: ${posted.body.toString('hex')}`);
  return reply;
}

describe('the outbound relay server', () => {
  let directory: string;
  let socketPath: string;
  let relay: OutboundServer;
  let closeListener: () => Promise<void>;

  beforeEach(async () => {
    directory = mkdtempSync(join(tmpdir(), 'relay-test-'));
    socketPath = join(directory, 'relay.sock');
    relay = new OutboundServer(MAX_BODY);
    const handedOver: string[] = [];
    closeListener = await relay.listen(socketPath, (path) => handedOver.push(path));
    expect(handedOver).toEqual([socketPath]);
  });

  afterEach(async () => {
    await closeListener();
    await relay.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const headersFor = (run: string, token = relay.token) => ({
    [relayCodec.tokenHeader]: token,
    [relayCodec.runHeader]: run,
  });

  it("hands a run's request to its handler, and its reply back as a frame", async () => {
    const seen: { method: string; url: string; header: string | null; body: string }[] = [];
    relay.handle('run-1', async (request) => {
      seen.push({
        method: request.method,
        url: request.url,
        header: request.headers.get('x-asked'),
        body: await request.text(),
      });
      return {
        head: { ok: true, status: 201, statusText: 'Made', headers: [['x-said', 'yes']], nullBody: false },
        body: new TextEncoder().encode('done'),
      };
    });
    const posted = await post(
      socketPath,
      headersFor('run-1'),
      requestFrame(
        { method: 'POST', headers: [['x-asked', 'please']], nullBody: false },
        new TextEncoder().encode('payload'),
      ),
    );
    expect(seen).toEqual([{ method: 'POST', url: 'https://example.test/thing', header: 'please', body: 'payload' }]);
    const reply = replyOf(posted);
    expect(reply.head).toEqual({
      ok: true,
      status: 201,
      statusText: 'Made',
      headers: [['x-said', 'yes']],
      nullBody: false,
    });
    expect(new TextDecoder().decode(reply.body)).toBe('done');
  });

  it('refuses a request without the relay token with a 403, and never calls the handler', async () => {
    let called = false;
    relay.handle('run-1', async () => {
      called = true;
      return { head: { ok: false, error: 'unreachable' }, body: new Uint8Array() };
    });
    const posted = await post(socketPath, headersFor('run-1', 'not-the-token'), requestFrame());
    expect(posted.status).toBe(403);
    expect(called).toBe(false);
  });

  it('answers a run it does not know (or no longer knows) with the completed text', async () => {
    relay.handle('run-1', async () => ({ head: { ok: false, error: 'unreachable' }, body: new Uint8Array() }));
    relay.drop('run-1');
    expect(replyOf(await post(socketPath, headersFor('run-1'), requestFrame())).head).toEqual({
      ok: false,
      error: COMPLETED_MESSAGE,
    });
    expect(replyOf(await post(socketPath, headersFor('run-2'), requestFrame())).head).toEqual({
      ok: false,
      error: COMPLETED_MESSAGE,
    });
  });

  it('answers a frame outside the grammar with its text', async () => {
    relay.handle('run-1', async () => ({ head: { ok: false, error: 'unreachable' }, body: new Uint8Array() }));
    const posted = await post(
      socketPath,
      headersFor('run-1'),
      new TextEncoder().encode('\u0000\u0000\u0000\u0009not json!'),
    );
    expect(replyOf(posted).head).toEqual({ ok: false, error: isolateText.relayRequestMalformed });
  });

  it('stops reading a frame past its body cap and answers with the cap in its text', async () => {
    relay.handle('run-1', async () => ({ head: { ok: false, error: 'unreachable' }, body: new Uint8Array() }));
    // The cap is the body's plus a megabyte of head allowance: this passes both.
    const oversized = requestFrame({ method: 'POST', nullBody: false }, new Uint8Array(MAX_BODY + 2 ** 20 + 1));
    // Declared, it is refused unread; chunked, it is refused once the bytes read pass the cap.
    for (const chunked of [false, true]) {
      const posted = await post(socketPath, headersFor('run-1'), oversized, chunked);
      expect(replyOf(posted).head).toEqual({ ok: false, error: isolateText.requestBodyTooLarge(MAX_BODY) });
    }
  });

  it("fails the fetch, not the host, for a request Node's Request refuses", async () => {
    relay.handle('run-1', async () => ({ head: { ok: false, error: 'unreachable' }, body: new Uint8Array() }));
    const posted = await post(socketPath, headersFor('run-1'), requestFrame({ method: 'TRACE' }));
    const reply = replyOf(posted);
    expect(reply.head.ok).toBe(false);
    expect(reply.head.ok === false && reply.head.error).toMatch(/^This fetch cannot be relayed to the host: /);
  });

  it("answers a handler's throw with its message", async () => {
    relay.handle('run-1', async () => {
      throw new Error('the outbound function broke');
    });
    expect(replyOf(await post(socketPath, headersFor('run-1'), requestFrame())).head).toEqual({
      ok: false,
      error: 'the outbound function broke',
    });
  });

  it('closes the listener when the hand-over of its socket fails, and reports the failure', async () => {
    const otherPath = join(directory, 'other.sock');
    await expect(
      relay.listen(otherPath, () => {
        throw new Error('cannot chown');
      }),
    ).rejects.toThrow('cannot chown');
    await expect(post(otherPath, headersFor('run-1'), requestFrame())).rejects.toThrow();
  });
});
