// crewline.config.ts
import { defineConfig } from '@crewline/runtime';
import { myModel } from './models.js';
import { ReportFlow } from './report-flow.js';
import { searchTool } from './tools.js';

export default defineConfig({
  tools: { search: searchTool }, // by the tool's name
  models: { 'team-model': myModel }, // an agent whose llm is myModel is stored as 'team-model'
  flows: { ReportFlow },
});
