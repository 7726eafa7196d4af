/**
 * The Durable Object that hosts upstream's runtime for flows under `wrangler dev`, built over
 * the executor its column uses. Each POST to `/flow` is one call of a flow, made on the object
 * its `session` names (one per flow run, so every flow starts from empty state). `/flow/restart`
 * aborts the object: `ctx.abort()` throws away its in-memory state, facets included, and the
 * next call reaches a fresh instance over the same SQLite storage, as after an eviction.
 */
import { DurableObject } from 'cloudflare:workers';
import { messageOf } from '../../src/protocol/index.js';
import { type HostStepRequest, type RuntimeApi, runHostStep } from '../flow-host.js';
import { texts } from '../texts.js';

/** The RPC methods of the flow host, as a stub reaches them. */
interface FlowHostStub {
  step(post: FlowPost): Promise<unknown>;
  whoami(): Promise<string>;
  restart(): Promise<void>;
}

export interface FlowEnv {
  LOADER: unknown;
  FLOW_HOST: { idFromName(name: string): unknown; get(id: unknown): FlowHostStub };
}

/** One POST to `/flow`. */
export interface FlowPost {
  session: string;
  /** The daemon the `ours-worker` column's executor connects to; absent on reference columns. */
  daemon?: string;
  request: HostStepRequest;
}

type ExecutorOf = (env: FlowEnv, daemon: string | undefined, modules: HostStepRequest['modules']) => Promise<unknown>;

export function flowHostClass(api: RuntimeApi, executorOf: ExecutorOf) {
  return class FlowHost extends DurableObject<FlowEnv> {
    /** Made once per instance: an I/O object (a daemon's WebSocket) belongs to the object that opened it. */
    #executor: Promise<unknown> | undefined;

    async step(post: FlowPost) {
      // Every step of a flow carries the same modules: the first one's make the executor.
      this.#executor ??= executorOf(this.env, post.daemon, post.request.modules);
      return runHostStep(api, this.ctx, await this.#executor, post.request);
    }

    /** Which instance answers: a restart must change it. */
    readonly instance = crypto.randomUUID();

    whoami(): string {
      return this.instance;
    }

    restart(): void {
      this.ctx.abort('flow restart');
    }
  };
}

/** The `/flow` routes; anything else is left to `otherwise`. */
export async function routeFlow(request: Request, env: FlowEnv, otherwise: () => Promise<Response>): Promise<Response> {
  const path = new URL(request.url).pathname;
  if (path !== '/flow' && path !== '/flow/restart') return otherwise();
  let post: FlowPost;
  try {
    post = JSON.parse(await request.text()) as FlowPost;
  } catch (error) {
    return new Response(messageOf(error), { status: 400 });
  }
  const id = env.FLOW_HOST.idFromName(post.session);
  const stub = env.FLOW_HOST.get(id);
  if (path === '/flow') return Response.json(await stub.step(post));
  const before = await stub.whoami();
  try {
    await stub.restart();
  } catch {
    // The abort ends the call that asked for it; that rejection is the restart.
  }
  // An aborted stub stays broken: the next call goes through a new one.
  const after = await env.FLOW_HOST.get(id).whoami();
  if (after === before) return new Response(texts.flow.sameInstance(post.session), { status: 500 });
  return Response.json({ restarted: true });
}
