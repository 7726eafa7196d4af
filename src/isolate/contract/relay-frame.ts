/**
 * The frames of the outbound relay (host/relay/outbound-server.ts): a sandbox `fetch` crosses from the
 * supervisor's `Outbound` entrypoint to the host as one HTTP POST whose body is a frame, and the
 * host answers with one. A frame is a 4-byte big-endian head length, that many bytes of JSON head,
 * then the body bytes. The POST carries the relay's token and the run's id in two headers.
 *
 * The supervisor's bundle imports this module, so both ends share the frame layout, the heads and
 * the header names. A decoder returns `null` for a frame outside the grammar; it never throws.
 */

type HeaderPairs = [string, string][];

/** A sandbox request: method, URL, header pairs, and whether it had no body at all. */
export interface RelayRequestHead {
  url: string;
  method: string;
  headers: HeaderPairs;
  nullBody: boolean;
}

/** The outbound function's Response. */
interface RelayResponseHead {
  ok: true;
  status: number;
  statusText: string;
  headers: HeaderPairs;
  nullBody: boolean;
}

/** The fetch fails in the sandbox with this text (the outbound function threw, the run is over). */
interface RelayFailureHead {
  ok: false;
  error: string;
}

export type RelayReplyHead = RelayResponseHead | RelayFailureHead;

export interface RelayFrame<Head> {
  head: Head;
  body: Uint8Array;
}

export interface RelayCodec {
  /** The header the supervisor proves itself with. */
  readonly tokenHeader: string;
  /** The header naming the run the fetch belongs to. */
  readonly runHeader: string;
  encodeRequest(head: RelayRequestHead, body: Uint8Array): Uint8Array;
  decodeRequest(frame: Uint8Array): RelayFrame<RelayRequestHead> | null;
  encodeReply(head: RelayReplyHead, body: Uint8Array): Uint8Array;
  decodeReply(frame: Uint8Array): RelayFrame<RelayReplyHead> | null;
}

export function createRelayCodec(): RelayCodec {
  type Fields = Map<string, unknown>;

  function encode(head: RelayRequestHead | RelayReplyHead, body: Uint8Array): Uint8Array {
    const headBytes = new TextEncoder().encode(JSON.stringify(head));
    const frame = new Uint8Array(4 + headBytes.length + body.byteLength);
    new DataView(frame.buffer).setUint32(0, headBytes.length);
    frame.set(headBytes, 4);
    frame.set(body, 4 + headBytes.length);
    return frame;
  }

  function split(frame: Uint8Array): { fields: Fields; body: Uint8Array } | null {
    if (frame.byteLength < 4) return null;
    const length = new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getUint32(0);
    if (length > frame.byteLength - 4) return null;
    let parsed: unknown;
    try {
      parsed = JSON.parse(new TextDecoder().decode(frame.subarray(4, 4 + length)));
    } catch {
      return null;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
    return { fields: new Map(Object.entries(parsed)), body: frame.subarray(4 + length) };
  }

  function headersOf(value: unknown): HeaderPairs | null {
    if (!Array.isArray(value)) return null;
    const pairs: HeaderPairs = [];
    for (const pair of value) {
      if (!Array.isArray(pair) || pair.length !== 2) return null;
      const [name, content] = pair;
      if (typeof name !== 'string' || typeof content !== 'string') return null;
      pairs.push([name, content]);
    }
    return pairs;
  }

  function decodeRequest(frame: Uint8Array): RelayFrame<RelayRequestHead> | null {
    const parts = split(frame);
    if (parts === null) return null;
    const { fields, body } = parts;
    const url = fields.get('url');
    const method = fields.get('method');
    const headers = headersOf(fields.get('headers'));
    const nullBody = fields.get('nullBody');
    if (typeof url !== 'string' || typeof method !== 'string' || headers === null || typeof nullBody !== 'boolean')
      return null;
    return { head: { url, method, headers, nullBody }, body };
  }

  function decodeReply(frame: Uint8Array): RelayFrame<RelayReplyHead> | null {
    const parts = split(frame);
    if (parts === null) return null;
    const { fields, body } = parts;
    if (fields.get('ok') === false) {
      const error = fields.get('error');
      return typeof error === 'string' ? { head: { ok: false, error }, body } : null;
    }
    const status = fields.get('status');
    const statusText = fields.get('statusText');
    const headers = headersOf(fields.get('headers'));
    const nullBody = fields.get('nullBody');
    if (fields.get('ok') !== true || typeof status !== 'number' || typeof statusText !== 'string') return null;
    if (headers === null || typeof nullBody !== 'boolean') return null;
    return { head: { ok: true, status, statusText, headers, nullBody }, body };
  }

  return {
    // Also the header of the host's WebSocket upgrade, which carries the channel's token.
    tokenHeader: 'x-codemode-token',
    runHeader: 'x-codemode-run',
    encodeRequest: encode,
    decodeRequest,
    encodeReply: encode,
    decodeReply,
  };
}

export const relayCodec: RelayCodec = /* @__PURE__ */ createRelayCodec();
