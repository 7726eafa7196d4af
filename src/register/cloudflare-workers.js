// @ts-check
/**
 * What `cloudflare:workers` resolves to in a Node process started with the register entry: the
 * members `@cloudflare/codemode` imports from it at load time, in every release the peer range
 * covers. Its root entry subclasses `DurableObject` and `RpcTarget`, and its connectors (reached
 * from `/ai` too) subclass `WorkerEntrypoint`. In Node nothing else of them is used, so the classes
 * are inert: each stores what the Workers runtime's own constructor stores, and nothing more.
 *
 * A Workers-only feature behind them (a Durable Object's storage, RPC to a service binding, the
 * Worker Loader that `DynamicWorkerExecutor` needs) has no Node counterpart and stays unavailable.
 */

/** `new Connector(ctx, env)`: the runtime's constructor keeps both as own properties. */
export class WorkerEntrypoint {
  /**
   * @param {unknown} ctx
   * @param {unknown} env
   */
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
  }
}

/** Kept like `WorkerEntrypoint`'s; in Node no `DurableObjectState` exists to check `ctx` against. */
export class DurableObject {
  /**
   * @param {unknown} ctx
   * @param {unknown} env
   */
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
  }
}

/**
 * A marker base class: the runtime passes its subclasses by reference over RPC. Its one member is
 * a brand under a registry symbol, by which the durable state's facet calls (src/durable) pass an
 * instance by reference, as Workers RPC does, wherever this file was loaded from.
 */
export class RpcTarget {}
Object.defineProperty(RpcTarget.prototype, Symbol.for('@supolka/cloudflare-codemode-executor:RpcTarget'), {
  value: true,
});
