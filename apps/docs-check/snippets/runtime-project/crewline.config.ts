// crewline.config.ts
import { defineConfig } from '@crewline/runtime';
import { myModel } from './models.js';
import { ReportFlow } from './report-flow.js';
import { searchTool } from './tools.js';

export default defineConfig({
  tools: { search: searchTool }, // by the tool's name
  // stored as 'team-model' by a script that calls registerProject(config) and gives agents this myModel
  models: { 'team-model': myModel },
  flows: { ReportFlow },
  // US dollars per million tokens, as your provider bills them (crewline keeps no prices)
  modelPrices: {
    'openai:gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10, cachedInputPerMillion: 1.25 },
  },
});
