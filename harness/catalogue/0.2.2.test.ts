import { catalogueSuite } from './suite.js';

catalogueSuite('0.2.2');
