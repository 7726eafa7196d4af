/**
 * The reply to a relayed sandbox fetch (outbound-server.ts), made from what the request's
 * outbound function returned: a Response, its body read only up to `limits.maxResponseBodyBytes`.
 */
import { describeValue } from '../../../protocol/describe-value.js';
import { readBounded } from '../../contract/bounded-read.js';
import type { RelayFrame, RelayReplyHead } from '../../contract/relay-frame.js';
import { isolateText } from '../../host/texts.js';

interface ResponseLike {
  status: number;
  statusText?: string;
  headers: Iterable<[string, string]>;
  body: unknown;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/**
 * A response's body, read only up to `cap` bytes while it streams, so an outbound function that
 * answers with gigabytes never has them buffered here.
 */
async function readCapped(response: ResponseLike, cap: number): Promise<Uint8Array> {
  const declared = Number(new Headers([...response.headers]).get('content-length'));
  if (declared > cap) throw new RangeError(isolateText.responseBodyTooLarge(cap));
  if (!(response.body instanceof ReadableStream)) {
    const whole = new Uint8Array(await response.arrayBuffer());
    if (whole.byteLength > cap) throw new RangeError(isolateText.responseBodyTooLarge(cap));
    return whole;
  }
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  return readBounded(reader, cap, () => new RangeError(isolateText.responseBodyTooLarge(cap)));
}

function isResponseLike(value: unknown): value is ResponseLike {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<ResponseLike>;
  return (
    typeof candidate.status === 'number' &&
    typeof candidate.arrayBuffer === 'function' &&
    candidate.headers !== undefined
  );
}

/** The reply frame for what the outbound function returned; throws for anything but a Response. */
export async function replyFrame(response: unknown, cap: number): Promise<RelayFrame<RelayReplyHead>> {
  if (!isResponseLike(response)) throw new TypeError(isolateText.outboundNotResponse(describeValue(response)));
  const nullBody = response.body === null;
  const body = nullBody ? new Uint8Array() : await readCapped(response, cap);
  return {
    head: {
      ok: true,
      status: response.status,
      statusText: response.statusText ?? '',
      headers: [...response.headers],
      nullBody,
    },
    body,
  };
}
