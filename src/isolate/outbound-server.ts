/**
 * Where sandbox fetches reach the host's outbound function. A sandbox `fetch` lands in the
 * supervisor's `Outbound` entrypoint, which runs in a request context of its own and so cannot
 * write to the host's WebSocket (workerd ties I/O objects to the request that created them).
 * It relays the request instead through an `external` service binding to this loopback HTTP
 * server, one per executor, shared by its pool members.
 *
 * Both directions carry one frame of relay-frame.ts.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { COMPLETED_MESSAGE } from '../protocol/dispatch.js';
import { type RelayFrame, type RelayReplyHead, relayCodec } from './relay-frame.js';
import { isolateText } from './texts.js';

/** Answers one relayed request with the frame to send back. */
export type RelayHandler = (request: Request) => Promise<RelayFrame<RelayReplyHead>>;

export class OutboundServer {
  readonly token = randomBytes(24).toString('hex');
  readonly #server: Server;
  readonly #handlers = new Map<string, RelayHandler>();
  #port = 0;

  private constructor() {
    this.#server = createServer((request, response) => void this.#serve(request, response));
  }

  static async start(): Promise<OutboundServer> {
    const server = new OutboundServer();
    await new Promise<void>((resolve, reject) => {
      server.#server.once('error', reject);
      server.#server.listen(0, '127.0.0.1', () => resolve());
    });
    server.#port = (server.#server.address() as AddressInfo).port;
    // An idle executor must not keep the host alive (see loop-hold.ts).
    server.#server.unref();
    return server;
  }

  get port(): number {
    return this.#port;
  }

  handle(runId: string, handler: RelayHandler): void {
    this.#handlers.set(runId, handler);
  }

  drop(runId: string): void {
    this.#handlers.delete(runId);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
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
