/**
 * The receiving half of our capnweb transports: order kept, one waiter served, the first failure
 * final, and our own abort leaving a waiting receive to the session tearing itself down.
 */
import { describe, expect, it } from 'vitest';
import { InboundQueue, truncateCloseReason } from '../../src/wire/inbound-queue.js';

/** Whether a promise has settled, after the microtasks queued so far have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('the inbound queue', () => {
  it('keeps messages that arrive before a receive, in order', async () => {
    const queue = new InboundQueue();
    queue.deliver('one');
    queue.deliver('two');
    expect(queue.length).toBe(2);
    expect(await queue.receive()).toBe('one');
    expect(await queue.receive()).toBe('two');
    expect(queue.length).toBe(0);
  });

  it('hands a message straight to the receive waiting for it', async () => {
    const queue = new InboundQueue();
    const waiting = queue.receive();
    expect(await settled(waiting)).toBe(false);
    queue.deliver('now');
    expect(await waiting).toBe('now');
    expect(queue.length).toBe(0);
  });

  it('delivers what was queued before a failure, then rejects with the first failure only', async () => {
    const queue = new InboundQueue();
    queue.deliver('before');
    const first = new Error('first');
    queue.fail(first);
    queue.fail(new Error('second'));
    queue.deliver('after');
    expect(queue.error).toBe(first);
    expect(await queue.receive()).toBe('before');
    await expect(queue.receive()).rejects.toBe(first);
    await expect(queue.receive()).rejects.toBe(first);
  });

  it('rejects the receive waiting when the transport fails', async () => {
    const queue = new InboundQueue();
    const waiting = queue.receive();
    const failure = new Error('closed');
    queue.fail(failure);
    await expect(waiting).rejects.toBe(failure);
  });

  it('after our own abort, rejects later receives but leaves the waiting one unsettled', async () => {
    const queue = new InboundQueue();
    const waiting = queue.receive();
    const reason = new Error('we ended it');
    queue.abort(reason);
    expect(await settled(waiting)).toBe(false);
    await expect(queue.receive()).rejects.toBe(reason);
    // A failure after the abort does not replace the abort's reason.
    queue.fail(new Error('later'));
    expect(queue.error).toBe(reason);
  });
});

describe('a close reason', () => {
  it('is kept whole up to 123 bytes', () => {
    const reason = 'x'.repeat(123);
    expect(truncateCloseReason(reason)).toBe(reason);
  });

  it('is cut to 123 bytes without splitting a character', () => {
    // 61 two-byte characters are 122 bytes; the 62nd would straddle the cut.
    const cut = truncateCloseReason('é'.repeat(100));
    expect(cut).toBe('é'.repeat(61));
    expect(new TextEncoder().encode(cut).length).toBeLessThanOrEqual(123);
  });
});
