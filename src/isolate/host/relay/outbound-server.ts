/**
 * Where sandbox fetches reach the host's outbound function. A sandbox `fetch` lands in the
 * supervisor's `Outbound` entrypoint, which runs in a request context of its own and so cannot
 * write to the host's WebSocket (workerd ties I/O objects to the request that created them).
 * It relays the request instead through an `external` service binding to this HTTP server, one
 * per executor, shared by its pool members. It opens no TCP port: each member reaches it on a
 * Unix socket in the member's private directory (`listen`).
 *
 * Both directions carry one frame of relay-frame.ts.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { messageOf } from '../../../protocol/message-of.js';
import { COMPLETED_MESSAGE } from '../../../protocol/texts.js';
import { type RelayFrame, type RelayReplyHead, type RelayRequestHead, relayCodec } from '../../contract/relay-frame.js';
import { isolateText } from '../../host/texts.js';

/** Answers one relayed request with the frame to send back. */
export type RelayHandler = (request: Request) => Promise<RelayFrame<RelayReplyHead>>;

/** Room for a frame's head (method, URL, header pairs) beyond its body. */
const HEAD_ALLOWANCE_BYTES = 2 ** 20;

function failure(error: string): RelayFrame<RelayReplyHead> {
  return { head: { ok: false, error }, body: new Uint8Array() };
}

/** The frame's bytes, or `null` once they pass `cap`: then reading stops, and nothing more is kept. */
async function readFrame(incoming: IncomingMessage, cap: number): Promise<Buffer | null> {
  const declared = Number(incoming.headers['content-length']);
  if (declared > cap) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of incoming) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += bytes.byteLength;
    if (size > cap) return null;
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, size);
}

/**
 * The relayed request as a standard `Request`. workerd lets a sandbox send what Node's `Request`
 * refuses (a TRACE, a GET whose headers announce a body): that is a failure of this fetch, which
 * the sandbox sees as its `fetch` rejecting, never an exception here.
 */
function requestOf(frame: RelayFrame<RelayRequestHead>): Request | string {
  const { head, body } = frame;
  const bodiless = head.method === 'GET' || head.method === 'HEAD';
  try {
    return new Request(head.url, {
      method: head.method,
      headers: head.headers,
      ...(head.nullBody || (bodiless && body.byteLength === 0) ? {} : { body: new Uint8Array(body) }),
    });
  } catch (error) {
    return isolateText.relayRequestRefused(messageOf(error));
  }
}

export class OutboundServer {
  readonly token = randomBytes(24).toString('hex');
  /** One per member, each on its member's socket. */
  readonly #servers = new Set<Server>();
  readonly #handlers = new Map<string, RelayHandler>();
  readonly #maxFrameBytes: number;
  readonly #requestBodyTooLarge: string;

  /**
   * `maxRequestBodyBytes`: the supervisor enforces it first; this bounds what the host reads.
   * Nothing listens until a member does (`listen`).
   */
  constructor(maxRequestBodyBytes: number) {
    this.#maxFrameBytes = maxRequestBodyBytes + HEAD_ALLOWANCE_BYTES;
    this.#requestBodyTooLarge = isolateText.requestBodyTooLarge(maxRequestBodyBytes);
  }

  /**
   * Serves one member's relayed fetches on the Unix socket at `path`. `handOver` gives the socket
   * to the member's uid when it is not the host's. Resolves with the listener's closer.
   */
  async listen(path: string, handOver: (path: string) => void): Promise<() => Promise<void>> {
    const server = createServer((request, response) => {
      // Nothing a relayed request does may reject unhandled: a broken one only loses its reply.
      this.#serve(request, response).catch(() => response.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
    this.#servers.add(server);
    // A failed accept (EMFILE, ENFILE) is emitted on the server, and unheard would end the host;
    // the relayed fetch it was for fails in the member instead.
    server.on('error', () => {});
    // An idle executor must not keep the host alive (see loop-hold.ts).
    server.unref();
    const close = () => {
      this.#servers.delete(server);
      return closeServer(server);
    };
    try {
      handOver(path);
    } catch (error) {
      void close();
      throw error;
    }
    return close;
  }

  handle(runId: string, handler: RelayHandler): void {
    this.#handlers.set(runId, handler);
  }

  drop(runId: string): void {
    this.#handlers.delete(runId);
  }

  async close(): Promise<void> {
    const servers = [...this.#servers];
    this.#servers.clear();
    await Promise.all(servers.map(closeServer));
  }

  async #serve(incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> {
    if (incoming.headers[relayCodec.tokenHeader] !== this.token) {
      outgoing.writeHead(403).end();
      return;
    }
    const reply = await this.#answer(incoming);
    outgoing
      .writeHead(200, { 'content-type': 'application/octet-stream' })
      .end(relayCodec.encodeReply(reply.head, reply.body));
  }

  async #answer(incoming: IncomingMessage): Promise<RelayFrame<RelayReplyHead>> {
    const bytes = await readFrame(incoming, this.#maxFrameBytes);
    if (bytes === null) return failure(this.#requestBodyTooLarge);
    const frame = relayCodec.decodeRequest(bytes);
    if (frame === null) return failure(isolateText.relayRequestMalformed);
    const handler = this.#handlers.get(String(incoming.headers[relayCodec.runHeader]));
    if (handler === undefined) return failure(COMPLETED_MESSAGE);
    const request = requestOf(frame);
    if (typeof request === 'string') return failure(request);
    try {
      return await handler(request);
    } catch (error) {
      return failure(messageOf(error));
    }
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
