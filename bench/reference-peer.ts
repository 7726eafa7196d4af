/**
 * The reference side of the benchmark: the newest upstream `DynamicWorkerExecutor` under
 * `wrangler dev` (the harness's `latest` column), driven from Node over HTTP, one execute per POST.
 *
 * Every figure it yields therefore includes an HTTP round trip to wrangler dev, which ours (in
 * process) does not pay. `roundTrip()` measures that part alone: a POST of `{}`, which the
 * reference worker refuses with a 400 before it constructs any executor, over the same connection
 * pool to the same wrangler. The report subtracts it pairwise, round by round.
 */
import { readFileSync } from 'node:fs';
import type { CaseModule } from '../harness/case-model.js';
import { groupMembers } from '../harness/processes.js';
import type { ReferenceRequest } from '../harness/reference/request.js';
import { type ReferenceColumn, startReferenceColumn } from '../harness/reference/wrangler.js';
import type { ColumnVersions } from '../harness/report/model.js';
import { checkOutcome, type Workload } from './workloads.js';

const REFERENCE_COLUMN = 'latest';

export interface ReferencePeer {
  name: string;
  versions: ColumnVersions;
  /**
   * One execute of the workload; throws unless it produced the workload's result. `modules` is the
   * executor's constructor option, as an upstream host passes a bundled set.
   */
  run(workload: Workload, modules?: Record<string, CaseModule>): Promise<void>;
  /**
   * One POST the worker answers with a 400 at once: the HTTP round trip alone. With `modules`, the
   * body carries them (and no case), so it measures what posting the map costs before any executor.
   */
  roundTrip(modules?: Record<string, CaseModule>): Promise<void>;
  /** A runtime flow session on the column's Durable Object host (flows.ts), for the runtime phase. */
  openFlow?: ReferenceColumn['openFlow'];
  /** Resident set of the workerd that runs the reference worker (host worker and every dynamic worker), in MB. */
  workerdRssMb(): number | undefined;
  stop(): Promise<void>;
}

/** The bare round trip's body: valid JSON the worker's request parser refuses (no `caseId`, as with modules alone). */
const ROUND_TRIP_BODY = '{}';
const ROUND_TRIP_STATUS = 400;

function unexpectedRoundTrip(status: number, body: string): string {
  return `The HTTP round-trip probe to the reference worker expected a ${ROUND_TRIP_STATUS}, got ${status}: ${body.slice(0, 300)}`;
}

function rssMbOf(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? undefined : Number(match[1]) / 1024;
  } catch {
    return undefined; // No /proc, or the process is gone.
  }
}

function describeRequest(workload: Workload, modules: Record<string, CaseModule> | undefined): ReferenceRequest {
  return {
    caseId: `bench-${workload.name}`,
    code: workload.code,
    providers: workload.providers,
    ...(modules === undefined ? {} : { modules }),
  };
}

export async function startReferencePeer(): Promise<ReferencePeer> {
  const column = await startReferenceColumn(REFERENCE_COLUMN);
  const name = `upstream ${column.versions.codemode} DynamicWorkerExecutor (wrangler dev ${column.versions.wrangler})`;
  return {
    name,
    versions: column.versions,
    ...(column.openFlow ? { openFlow: column.openFlow } : {}),
    async run(workload, modules) {
      checkOutcome(name, workload, await column.run(describeRequest(workload, modules)));
    },
    async roundTrip(modules) {
      const response = await fetch(column.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: modules === undefined ? ROUND_TRIP_BODY : JSON.stringify({ modules }),
      });
      const body = await response.text();
      if (response.status !== ROUND_TRIP_STATUS) throw new Error(unexpectedRoundTrip(response.status, body));
    },
    workerdRssMb() {
      // wrangler dev runs two workerd: its dev proxy, and the runtime of the worker, the one with an inspector.
      const workerds = groupMembers(column.processGroup).filter((member) =>
        /\/workerd$/.test(member.command.split(' ')[0] ?? ''),
      );
      const runtime = workerds.find((member) => member.command.includes('--inspector-addr')) ?? workerds[0];
      return runtime === undefined ? undefined : rssMbOf(runtime.pid);
    },
    stop: () => column.stop(),
  };
}
