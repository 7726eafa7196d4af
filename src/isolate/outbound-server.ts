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
import { COMPLETED_MESSAGE } from '../protocol/dispatch.js';
import { type RelayFrame, type RelayReplyHead, relayCodec } from './relay-frame.js';
import { isolateText } from './texts.js';

/** Answers one relayed request with the frame to send back. */
export type RelayHandler = (request: Request) => Promise<RelayFrame<RelayReplyHead>>;

export class OutboundServer {
  readonly token = randomBytes(24).toString('hex');
  /** One per member, each on its member's socket. */
  readonly #servers = new Set<Server>();
  readonly #handlers = new Map<string, RelayHandler>();

  private constructor() {}

  static async start(): Promise<OutboundServer> {
    return new OutboundServer();
  }

  /**
   * Serves one member's relayed fetches on the Unix socket at `path`. `handOver` gives the socket
   * to the member's uid when it is not the host's. Resolves with the listener's closer.
   */
  async listen(path: string, handOver: (path: string) => void): Promise<() => Promise<void>> {
    const server = createServer((request, response) => void this.#serve(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
    this.#servers.add(server);
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
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const frame = relayCodec.decodeRequest(Buffer.concat(chunks));
    const handler = this.#handlers.get(String(incoming.headers[relayCodec.runHeader]));
    let reply: RelayFrame<RelayReplyHead>;
    if (frame === null)
      reply = { head: { ok: false, error: isolateText.relayRequestMalformed }, body: new Uint8Array() };
    else if (handler === undefined) reply = { head: { ok: false, error: COMPLETED_MESSAGE }, body: new Uint8Array() };
    else {
      const { head, body } = frame;
      const request = new Request(head.url, {
        method: head.method,
        headers: head.headers,
        ...(head.nullBody ? {} : { body: new Uint8Array(body) }),
      });
      reply = await handler(request);
    }
    outgoing
      .writeHead(200, { 'content-type': 'application/octet-stream' })
      .end(relayCodec.encodeReply(reply.head, reply.body));
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
