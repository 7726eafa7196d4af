/**
 * The supervisor's `Outbound` entrypoint: the `globalOutbound` of a run whose fetches the host
 * answers. It runs in a request context of its own, where the host's WebSocket is out of reach,
 * so it relays over the HOST binding (the host's relay/outbound-server.ts).
 */
import { WorkerEntrypoint } from 'cloudflare:workers';
import { readBounded } from '../contract/bounded-read.js';
import { createRelayCodec } from '../contract/relay-frame.js';
import type { SupervisorSettings } from '../contract/sandbox-settings.js';
import { supervisorText } from '../contract/texts.js';
import type { OutboundProps, RouteId, RunId, SupervisorEnv } from './types.js';

const relay = createRelayCodec();

/** outbound route → the run currently answering for it. */
const routes = new Map<RouteId, RunId>();
/** outbound route → its fetches in flight, bounded by `limits.maxConcurrentFetches`. */
const fetchesInFlight = new Map<RouteId, number>();

/** Sends the route's fetches to `run`, until `closeRoute`. */
export function openRoute(route: RouteId, run: RunId): void {
  routes.set(route, run);
}

export function closeRoute(route: RouteId): void {
  routes.delete(route);
}

/**
 * A request's body, read only up to `limits.maxRequestBodyBytes`: one over it fails the fetch
 * before anything is sent.
 */
async function readCapped(request: Request, settings: SupervisorSettings): Promise<Uint8Array> {
  const cap = settings.maxRequestBodyBytes;
  const declared = Number(request.headers.get('content-length'));
  if (declared > cap) throw new Error(supervisorText.requestBodyTooLarge(cap));
  const reader = request.body?.getReader();
  if (reader === undefined) return new Uint8Array();
  return readBounded(reader, cap, () => new Error(supervisorText.requestBodyTooLarge(cap)));
}

export class Outbound extends WorkerEntrypoint<SupervisorEnv, OutboundProps> {
  override async fetch(request: Request): Promise<Response> {
    const settings = this.env.SETTINGS;
    const route = this.ctx.props.route;
    const run = routes.get(route);
    if (run === undefined) throw new Error(supervisorText.outboundAfterRun);
    const inFlight = fetchesInFlight.get(route) ?? 0;
    if (inFlight >= settings.maxConcurrentFetches) {
      throw new Error(supervisorText.tooManyFetches(settings.maxConcurrentFetches));
    }
    fetchesInFlight.set(route, inFlight + 1);
    try {
      return await this.#relay(request, run, settings);
    } finally {
      const left = (fetchesInFlight.get(route) ?? 1) - 1;
      if (left === 0) fetchesInFlight.delete(route);
      else fetchesInFlight.set(route, left);
    }
  }

  async #relay(request: Request, run: RunId, settings: SupervisorSettings): Promise<Response> {
    const nullBody = request.body === null;
    const body = nullBody ? new Uint8Array() : await readCapped(request, settings);
    const head = { url: request.url, method: request.method, headers: [...request.headers], nullBody };
    const relayed = await this.env.HOST.fetch('http://host/outbound', {
      method: 'POST',
      headers: { [relay.tokenHeader]: settings.hostToken, [relay.runHeader]: run },
      body: relay.encodeRequest(head, body),
    });
    const reply = relay.decodeReply(new Uint8Array(await relayed.arrayBuffer()));
    if (reply === null) throw new Error(supervisorText.relayMalformed);
    if (!reply.head.ok) throw new Error(reply.head.error);
    const { status, statusText, headers } = reply.head;
    return new Response(reply.head.nullBody ? null : reply.body, { status, statusText, headers });
  }
}
