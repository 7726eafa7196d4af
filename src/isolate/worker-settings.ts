/**
 * The settings the worker scripts are built with: the supervisor's SETTINGS binding
 * (supervisor-config.ts) and the harness's (sandbox-sources.ts). Types only, free of Node, so
 * tsconfig.worker.json checks the worker scripts against them.
 */

/** The supervisor's SETTINGS binding (worker/supervisor.js reads it). */
export interface SupervisorSettings {
  /** The channel's token, proven by the host's WebSocket upgrade in `tokenHeader`. */
  token: string;
  tokenHeader: string;
  /** The outbound relay's token. */
  hostToken: string;
  compatibilityDate: string;
  compatibilityFlags: string[];
  entryModule: string;
  harnessModule: string;
  outboundAfterRun: string;
  relayMalformed: string;
  hostGone: string;
  supervisorFailure: string;
  messageMalformed: string;
}

/** What the harness module of every execution is built with (sandbox-sources.ts). */
export interface HarnessSettings {
  /** The key of a retained function's handle record (the protocol's `HANDLE_KEY`). */
  handleKey: string;
  /** The text for a `proxySource` whose value is not an object; `{name}` stands for the provider. */
  proxySourceNotObject: string;
}
