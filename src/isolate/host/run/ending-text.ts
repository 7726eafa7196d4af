/**
 * The text of each way the executor ends a run (protocol/run-endings.ts), composed here and only
 * here, from the ending's data: the run puts it on the result beside the ending, and nothing reads
 * it back.
 */
import type { RunEnding } from '../../../protocol/run-endings.js';
import { formatCpuTimeout, formatTimeout } from '../../../protocol/texts.js';
import { isolateText } from '../../host/texts.js';

export function endingText(ending: RunEnding): string {
  switch (ending.code) {
    case 'EXECUTION_TIMEOUT':
      return formatTimeout(ending.timeout);
    case 'CPU_TIMEOUT':
      return formatCpuTimeout(ending.cpuTimeout);
    case 'PROGRAM_START_TIMEOUT':
      return isolateText.programStartTimedOut(ending.programStartTimeoutMs);
    case 'REQUEST_TOO_LARGE':
      return isolateText.requestTooLarge(ending.bytes, ending.maxRequestBytes);
    case 'OUT_OF_MEMORY':
      return isolateText.outOfMemory(ending.heapLimitMb);
    case 'MEMORY_LIMIT':
      return isolateText.memoryLimit(ending.memoryLimitMb);
    case 'OUTPUT_TOO_LARGE':
      return isolateText.processOutputTooLarge(ending.maxProcessOutputBytes);
    case 'MEMORY_BUDGET':
      return isolateText.memoryBudget(ending.usedMb, ending.budgetMb, ending.memberMb);
    case 'TENANT_SHARE_RECLAIMED':
      return isolateText.tenantShareReclaimed(ending.heldMb, ending.shareMb, ending.percent);
    case 'PROCESS_ENDED':
      return isolateText.processEnded(isolateText.exitStatus(ending.exitCode, ending.signal));
  }
}
