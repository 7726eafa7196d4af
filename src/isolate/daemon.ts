/**
 * What the daemon (src/server) reads of the isolate beyond its public entry (index.ts): the
 * descriptor limit and how a member's start reads when descriptors ran out, the descriptors each
 * member holds, and the rule texts its option refusals share with IsolateExecutor's. Node only,
 * and no entry of the package: code outside src/isolate imports the isolate through index.ts or
 * this module alone (`npm run lint`).
 */
export { optionRuleText } from './contract/texts.js';
export { descriptorFaultOf, descriptorLimit } from './host/member/descriptor-faults.js';
export { HOST_FDS_PER_MEMBER } from './host/options/host-sizing.js';
