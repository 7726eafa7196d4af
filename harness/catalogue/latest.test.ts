import { catalogueSuite } from './suite.js';

catalogueSuite('latest');
