/** The executor daemon for the remote benchmark, started by the harness's one daemon starter. */
import { type Service, startDaemonProcess } from '../harness/processes.js';

export interface DaemonOptions {
  maxWorkers: number;
  spare: number;
}

export type Daemon = Service;

export function startDaemon({ maxWorkers, spare }: DaemonOptions): Promise<Daemon> {
  return startDaemonProcess({
    label: "benchmark's",
    args: ['--max-workers', String(maxWorkers), '--spare', String(spare)],
  });
}
