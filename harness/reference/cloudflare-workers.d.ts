/**
 * The one member of `cloudflare:workers` the reference worker uses. The runtime provides the
 * module; this project installs no `@cloudflare/workers-types`, so the type is declared here.
 */
declare module 'cloudflare:workers' {
  /** A class whose instances cross Workers RPC by reference: the receiver calls its methods back. */
  export abstract class RpcTarget {}
}
