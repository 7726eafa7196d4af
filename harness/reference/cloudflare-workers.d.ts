/**
 * The members of `cloudflare:workers` the reference worker uses. The runtime provides the module;
 * the harness's TypeScript project does not load `@cloudflare/workers-types`, so they are declared here.
 */
declare module 'cloudflare:workers' {
  /** A class whose instances cross Workers RPC by reference: the receiver calls its methods back. */
  export abstract class RpcTarget {}

  /** An entrypoint of the worker; `ctx.props` is what the binding that reached it was made with. */
  export abstract class WorkerEntrypoint<Env = unknown, Props = unknown> {
    protected readonly ctx: { readonly props: Props };
    protected readonly env: Env;
    fetch?(request: Request): Response | Promise<Response>;
  }

  /** A Durable Object class; the flow host uses its state's `abort` and passes the state on as `ctx`. */
  export abstract class DurableObject<Env = unknown> {
    protected readonly ctx: { abort(reason?: string): void };
    protected readonly env: Env;
  }
}
