/**
 * Starting one pool member: the delegated cgroup checked once, the workerd process started
 * (confined where the mode says), its priority lowered below the host's. A failure that is not
 * already ours is `SANDBOX_UNAVAILABLE`, naming why; one for want of file descriptors says so.
 */
import { ExecutorError } from '../../../protocol/errors.js';
import { messageOf } from '../../../protocol/message-of.js';
import { isolateText } from '../../host/texts.js';
import type { Confinement } from '../confinement/detect.js';
import type { IsolateSettings } from '../options.js';
import type { OutboundServer } from '../relay/outbound-server.js';
import { descriptorFaultOf, descriptorLimit } from './descriptor-faults.js';
import { checkDelegatedCgroup } from './member-cgroup.js';
import { lowerMemberPriority } from './member-priority.js';
import { MemberProcess } from './member-process.js';
import type { MemberStartHook } from './start-hook.js';
import type { StartTimes } from './start-times.js';
import { resolveWorkerdBinary } from './workerd-binary.js';

/**
 * The pool's launch for one executor; its starts' steps are summed in `startTimes`, and
 * `beforeStart` is the test seam of start-hook.ts.
 */
export function launcherFor(
  settings: IsolateSettings,
  confinement: Confinement,
  relay: OutboundServer,
  startTimes: StartTimes,
  beforeStart?: MemberStartHook,
): () => Promise<MemberProcess> {
  let cgroupChecked = false;
  // Read while descriptors are free, for the text of a start that finds none.
  descriptorLimit();
  return async () => {
    try {
      await beforeStart?.();
      const { cgroup, memoryLimitMb } = settings;
      if (cgroup !== null && !cgroupChecked) {
        checkDelegatedCgroup(cgroup);
        cgroupChecked = true;
      }
      const member = await MemberProcess.start({
        binary: resolveWorkerdBinary(),
        relay,
        heapLimitMb: settings.heapLimitMb,
        limits: settings.limits,
        startupTimeoutMs: settings.startupTimeoutMs,
        confinement: confinement.confined ? confinement.plan : undefined,
        cgroup: cgroup === null ? null : { root: cgroup, memoryLimitMb },
        startTimes,
      });
      lowerMemberPriority(member.pid, () => member.alive);
      return member;
    } catch (error) {
      // Out of descriptors, whichever step met it: the text names the limit and what raises it.
      const fault = descriptorFaultOf(error);
      if (fault !== undefined)
        throw new ExecutorError('SANDBOX_UNAVAILABLE', isolateText.descriptorsExhausted(fault, descriptorLimit()), {
          cause: error,
          retryable: true,
        });
      if (error instanceof ExecutorError) throw error;
      throw new ExecutorError('SANDBOX_UNAVAILABLE', isolateText.sandboxUnavailable(messageOf(error)), {
        cause: error,
      });
    }
  };
}
