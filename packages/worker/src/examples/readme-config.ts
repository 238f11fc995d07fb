// The crewline.config.ts of this package's README.md; readme-example.test.ts runs it.
// #region config
import { Agent, Crew, defineConfig, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import { defineRuns } from '@crewline/worker';

const model = offlineModel(); // any AI SDK model

export default {
  ...defineConfig({ models: { 'readme:model': model } }),
  runs: defineRuns({
    crews: {
      // Called once per attempt, in whichever worker takes the run: build the same crew every time.
      report: () => {
        const planner = new Agent({
          role: 'Planner',
          goal: 'Outline a report on {topic}',
          backstory: 'Brief',
          llm: model,
        });
        const writer = new Agent({
          role: 'Writer',
          goal: 'Write about {topic}',
          backstory: 'Clear',
          llm: model,
        });
        const outline = new Task({
          description: 'Outline a report on {topic}',
          expectedOutput: 'Five headings',
          agent: planner,
        });
        const write = new Task({
          description: 'Write the report on {topic} from the outline',
          expectedOutput: 'A page',
          agent: writer,
        });
        return new Crew({ name: 'report', agents: [planner, writer], tasks: [outline, write] });
      },
    },
  }),
};
// #endregion config
