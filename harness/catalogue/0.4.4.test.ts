import { catalogueSuite } from './suite.js';

catalogueSuite('0.4.4');
