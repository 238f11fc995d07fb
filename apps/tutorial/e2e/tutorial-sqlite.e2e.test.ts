import { tutorialScenario } from './support/scenario.js';

tutorialScenario('sqlite');
