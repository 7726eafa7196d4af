/**
 * A reference column as a running service: `wrangler dev` bundling `worker.ts` against one release
 * (its configuration in this folder), on free loopback ports, stopped with its whole process group.
 * A case runs there as one POST. Used by the engine's sides, the surface inventory and the
 * benchmark. Node-only.
 */

import { readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { makeProcessDirectory } from '../../src/isolate/host/confinement/process-directories.js';
import type { Outcome } from '../case-model.js';
import { referenceConfig, referenceVersions, WRANGLER_BIN } from '../columns.js';
import { fetchFailure } from '../fetch-failure.js';
import type { Flow } from '../flow-model.js';
import type { FlowSession } from '../flows.js';
import { type Service, ServiceRefused, startService } from '../processes.js';
import type { ColumnVersions } from '../report/model.js';
import { texts } from '../texts.js';
import type { ReferenceRequest } from './request.js';

export interface ReferenceColumn extends Omit<Service, 'gone'> {
  name: string;
  versions: ColumnVersions;
  /** One `execute` on this column. Rejects only on infrastructure failure, never for the case's own outcome. */
  run(request: ReferenceRequest): Promise<Outcome>;
  /** From 0.4.0 on: a runtime host for one flow. */
  openFlow?(flow: Flow): Promise<FlowSession>;
}

/** A cold start takes 3–25 s; the machine is shared. */
const READY_TIMEOUT_MS = 120_000;
const START_ATTEMPTS = 3;
/** The longest default timeout of any release (docs/upstream.md, "The default timeout"). */
const LONGEST_DEFAULT_TIMEOUT_MS = 60_000;
/** Room for loading the dynamic worker and the round trip, beyond the in-sandbox timeout. */
const ANSWER_GRACE_MS = 30_000;

/** No telemetry, no prompts, no colour, no interactive session. */
const QUIET_ENV = {
  CI: 'true',
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_SEND_ERROR_REPORTS: 'false',
  NO_COLOR: '1',
  FORCE_COLOR: '0',
};

/** `count` distinct free ports: every listener stays open until all are known, so none repeats. */
async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i += 1)
      servers.push(
        await new Promise<Server>((resolve, reject) => {
          const server = createServer().once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
      );
    return servers.map((server) => (server.address() as AddressInfo).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/**
 * Starts `wrangler dev` on one configuration and waits for its `Ready on http://...` line. Two
 * `wrangler dev` sharing an inspector port collide, so both ports are probed free and distinct; a
 * port taken between probing and binding is retried on fresh ports.
 *
 * Its local state (Durable Object storage) goes to a directory of its own, removed when it stops:
 * nothing a case needs survives a start (each flow names a fresh object), and state kept between
 * runs in one place for every column breaks them all once a workerd has migrated its format (a
 * newer workerd tried on one column left `_cf_ALARM` unreadable to the pinned one). The directory
 * names the process, so one a SIGKILLed matrix left is removed when the next starts a column.
 */
export async function startWranglerDev(column: string, configPath: string, readyTimeoutMs: number): Promise<Service> {
  const state = makeProcessDirectory(tmpdir(), 'codemode-reference-state-');
  const removeState = () => rmSync(state, { recursive: true, force: true });
  try {
    const dev = await startWranglerOn(column, configPath, readyTimeoutMs, state);
    return { ...dev, stop: () => dev.stop().finally(removeState) };
  } catch (error) {
    removeState();
    throw error;
  }
}

async function startWranglerOn(
  column: string,
  configPath: string,
  readyTimeoutMs: number,
  state: string,
): Promise<Service> {
  const label = texts.reference.label(column);
  for (let attempt = 1; ; attempt += 1) {
    const [port, inspectorPort] = await freePorts(2);
    const ports = ['--port', String(port), '--inspector-port', String(inspectorPort)];
    try {
      return await startService({
        label,
        command: WRANGLER_BIN,
        args: [
          ...['dev', '--config', configPath, '--ip', '127.0.0.1', ...ports, '--persist-to', state],
          '--show-interactive-dev-session=false',
        ],
        cwd: dirname(configPath),
        // Its debug logs stay beside the column's other state, not in the user's home.
        env: { ...process.env, ...QUIET_ENV, WRANGLER_LOG_PATH: join(dirname(configPath), '.wrangler', 'logs') },
        ready: /Ready on (http:\/\/\S+)/,
        readyLine: 'Ready on http://...',
        readyTimeoutMs,
        refusal: /Address already in use/,
        stopGraceMs: 5_000,
      });
    } catch (error) {
      if (!(error instanceof ServiceRefused)) throw error;
      if (attempt === START_ATTEMPTS)
        throw new Error(texts.service.exitedEarly(label, texts.service.portsTaken, error.message));
    }
  }
}

/** Starts one column; its versions are read first, so a drifted alias is an error before anything starts. */
export async function startReferenceColumn(name: string): Promise<ReferenceColumn> {
  const versions = referenceVersions(name);
  const config = referenceConfig(name);
  const dev = await startWranglerDev(name, config, READY_TIMEOUT_MS);
  let stopped = false;
  // A configuration that binds the flow host (0.4.0 on) serves runtime flows too.
  const hostsFlows = 'durable_objects' in (JSON.parse(readFileSync(config, 'utf8')) as object);
  const { flowSessions } = await import('./flow-sessions.js');
  return {
    ...dev,
    name,
    versions,
    ...(hostsFlows ? { openFlow: flowSessions(name, dev.url) } : {}),
    run: (request) =>
      stopped ? Promise.reject(new Error(texts.reference.stopped(name))) : post(name, dev.url, request),
    stop: () => {
      stopped = true;
      return dev.stop();
    },
  };
}

async function post(column: string, url: string, request: ReferenceRequest): Promise<Outcome> {
  // The case's own bound, plus grace.
  const deadline = (request.timeout ?? LONGEST_DEFAULT_TIMEOUT_MS) + ANSWER_GRACE_MS;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(deadline),
    });
  } catch (error) {
    if (error instanceof Error && error.name === 'TimeoutError')
      throw new Error(texts.reference.timedOut(column, request.caseId, deadline));
    throw new Error(texts.reference.unreachable(column, request.caseId, fetchFailure(error)));
  }
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(texts.reference.requestFailed(column, request.caseId, response.status, text));
  return JSON.parse(text) as Outcome;
}
