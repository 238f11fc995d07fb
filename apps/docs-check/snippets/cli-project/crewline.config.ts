// crewline.config.ts
import { defineConfig } from '@crewline/runtime';
import { ResearchFlow } from './src/research-flow.js';
import { searchTool } from './src/tools.js';

export default defineConfig({ tools: { search: searchTool }, flows: { ResearchFlow } });
