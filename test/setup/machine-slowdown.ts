/**
 * Each test file measures the machine's slowdown when it starts (test/support/machine-slack.ts),
 * though files share a process: this file runs before each of them.
 */
import { measureSlowdownAgain } from '../support/machine-slack.js';

measureSlowdownAgain();
