/**
 * Converts the standard `Request` and `Response` of an outbound fetch to plain data and back,
 * because capnweb cannot carry either. The daemon converts the sandbox's `Request` and rebuilds the
 * `Response`; the client does the opposite around the caller's outbound function.
 */
import { formatOutboundStatus } from './texts.js';
import type { WireFetchRequest, WireFetchResponse } from './types.js';

/** Statuses whose Response cannot carry a body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

function headerEntries(headers: Headers): [string, string][] {
  const entries: [string, string][] = [];
  headers.forEach((value, name) => {
    entries.push([name, value]);
  });
  return entries;
}

async function readBody(body: Request | Response): Promise<Uint8Array | null> {
  if (body.body === null) return null;
  return new Uint8Array(await body.arrayBuffer());
}

export async function requestToWire(request: Request): Promise<WireFetchRequest> {
  return {
    url: request.url,
    method: request.method,
    headers: headerEntries(request.headers),
    body: await readBody(request),
  };
}

export function requestFromWire(wire: WireFetchRequest): Request {
  const hasBody = wire.body !== null && wire.method !== 'GET' && wire.method !== 'HEAD';
  return new Request(wire.url, {
    method: wire.method,
    headers: wire.headers,
    body: hasBody ? (wire.body as BodyInit) : null,
  });
}

export async function responseToWire(response: Response): Promise<WireFetchResponse> {
  if (response.status < 200 || response.status > 599) throw new TypeError(formatOutboundStatus(response.status));
  return {
    status: response.status,
    statusText: response.statusText,
    headers: headerEntries(response.headers),
    body: await readBody(response),
  };
}

export function responseFromWire(wire: WireFetchResponse): Response {
  const body = NULL_BODY_STATUSES.has(wire.status) ? null : (wire.body as BodyInit | null);
  return new Response(body, { status: wire.status, statusText: wire.statusText, headers: wire.headers });
}
