/**
 * `@supolka/cloudflare-codemode-executor/register`: run a Node host of `@cloudflare/codemode`'s
 * helpers with `node --import @supolka/cloudflare-codemode-executor/register host.js`.
 *
 * Upstream's entries import `cloudflare:workers` at load time, a module only the Workers runtime
 * provides, so Node refuses to load them (`ERR_UNSUPPORTED_ESM_URL_SCHEME`). This registers a
 * resolve hook (Node's module customization hooks) that answers that one specifier with an inert
 * stand-in, and leaves every other specifier to Node. See docs/moving-a-host.md.
 */
import { register } from 'node:module';

// The hooks run on Node's loader thread, which runs no TypeScript: they are plain JavaScript
// beside this module, in src/ as in dist/.
register('./hooks.js', import.meta.url);
