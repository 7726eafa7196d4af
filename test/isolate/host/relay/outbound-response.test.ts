/**
 * The reply frame made from what a request's outbound function returned: a Response's head and
 * body, the body read only up to its cap whether it is declared, streamed or buffered, and
 * anything but a Response refused with what it was.
 */
import { describe, expect, it } from 'vitest';
import { replyFrame } from '../../../../src/isolate/host/relay/outbound-response.js';
import { isolateText } from '../../../../src/isolate/host/texts.js';

const CAP = 16;

describe('the reply frame of a relayed fetch', () => {
  it("carries the response's status, text, headers and body", async () => {
    const frame = await replyFrame(
      new Response('hello', { status: 202, statusText: 'Taken', headers: { 'x-one': '1' } }),
      CAP,
    );
    expect(frame.head).toEqual({
      ok: true,
      status: 202,
      statusText: 'Taken',
      headers: [
        ['content-type', 'text/plain;charset=UTF-8'],
        ['x-one', '1'],
      ],
      nullBody: false,
    });
    expect(new TextDecoder().decode(frame.body)).toBe('hello');
  });

  it('tells a null body from an empty one', async () => {
    expect((await replyFrame(new Response(null, { status: 204 }), CAP)).head).toMatchObject({ nullBody: true });
    expect((await replyFrame(new Response(''), CAP)).head).toMatchObject({ nullBody: false });
  });

  it('refuses a declared length over the cap before reading', async () => {
    let pulled = false;
    // No high-water mark: the stream pulls only when read, so `pulled` tells whether it was.
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          pulled = true;
          controller.enqueue(new Uint8Array(CAP + 1));
          controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    const response = new Response(body, { headers: { 'content-length': String(CAP + 1) } });
    await expect(replyFrame(response, CAP)).rejects.toThrow(isolateText.responseBodyTooLarge(CAP));
    expect(pulled).toBe(false);
  });

  it('stops reading a stream once it passes the cap, leaving the rest unread', async () => {
    let chunksPulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        chunksPulled += 1;
        controller.enqueue(new Uint8Array(10));
      },
    });
    await expect(replyFrame(new Response(body), CAP)).rejects.toThrow(isolateText.responseBodyTooLarge(CAP));
    // An endless body: the read stopped a chunk or two past the cap, not at the end.
    expect(chunksPulled).toBeLessThan(5);
  });

  it('caps a response-like value whose body is not a stream', async () => {
    const bufferedOnly = {
      status: 200,
      headers: [] as [string, string][],
      body: 'not a stream',
      arrayBuffer: async () => new Uint8Array(CAP + 1).buffer,
    };
    await expect(replyFrame(bufferedOnly, CAP)).rejects.toThrow(isolateText.responseBodyTooLarge(CAP));
  });

  it('refuses anything but a Response, naming what it was', async () => {
    await expect(replyFrame('text', CAP)).rejects.toThrow(TypeError);
    await expect(replyFrame({ status: 200 }, CAP)).rejects.toThrow(isolateText.outboundNotResponse('an object'));
  });
});
