import { tutorialScenario } from './support/scenario.js';

tutorialScenario('json');
