/** The did-you-mean of the daemon's flags and the case files' keys: the one every option check uses. */
export { nearestName } from '../protocol/nearest-name.js';
