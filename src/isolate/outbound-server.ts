/**
 * Where sandbox fetches reach the host's outbound function. A sandbox `fetch` lands in the
 * supervisor's `Outbound` entrypoint, which runs in a request context of its own and so cannot
 * write to the host's WebSocket (workerd ties I/O objects to the request that created them).
 * It relays the request instead through an `external` service binding to this loopback HTTP
 * server, one per executor, shared by its pool members.
 *
 * Both directions carry one frame: a 4-byte big-endian length, that many bytes of JSON head, then
 * the body bytes. Request head: `{u, m, h, nb}` (url, method, header pairs, null body). Response
 * head: `{s, st, h, nb}`, or `{error}` when the outbound function threw.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { COMPLETED_MESSAGE } from '../protocol/dispatch.js';

export interface FrameHead {
  [field: string]: unknown;
}

function encodeFrame(head: FrameHead, body: Uint8Array): Buffer {
  const headBytes = Buffer.from(JSON.stringify(head), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(headBytes.length, 0);
  return Buffer.concat([length, headBytes, body]);
}

function decodeFrame(frame: Buffer): { head: FrameHead; body: Buffer } {
  const length = frame.readUInt32BE(0);
  return {
    head: JSON.parse(frame.subarray(4, 4 + length).toString('utf8')) as FrameHead,
    body: frame.subarray(4 + length),
  };
}

/** Answers one relayed request with the frame to send back. */
export type RelayHandler = (request: Request) => Promise<{ head: FrameHead; body: Uint8Array }>;

/** The header the supervisor proves itself with, and the one naming the run. */
const TOKEN_HEADER = 'x-codemode-token';
const RUN_HEADER = 'x-codemode-run';

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
    if (incoming.headers[TOKEN_HEADER] !== this.token) {
      outgoing.writeHead(403).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const { head, body } = decodeFrame(Buffer.concat(chunks));
    const handler = this.#handlers.get(String(incoming.headers[RUN_HEADER]));
    let reply: { head: FrameHead; body: Uint8Array };
    if (handler === undefined) reply = { head: { error: COMPLETED_MESSAGE }, body: new Uint8Array() };
    else {
      const request = new Request(String(head.u), {
        method: String(head.m),
        headers: head.h as [string, string][],
        ...(head.nb === true ? {} : { body: new Uint8Array(body) }),
      });
      reply = await handler(request);
    }
    outgoing.writeHead(200, { 'content-type': 'application/octet-stream' }).end(encodeFrame(reply.head, reply.body));
  }
}
