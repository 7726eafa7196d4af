import { catalogueSuite } from './suite.js';

catalogueSuite('0.3.8');
