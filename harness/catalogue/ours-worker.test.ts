import { catalogueSuite } from './suite.js';

catalogueSuite('ours-worker');
