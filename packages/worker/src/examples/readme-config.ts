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
        const writer = new Agent({
          role: 'Writer',
          goal: 'Write about {topic}',
          backstory: 'Clear',
          llm: model,
        });
        const task = new Task({
          description: 'Write a report on {topic}',
          expectedOutput: 'A page',
          agent: writer,
        });
        return new Crew({ name: 'report', agents: [writer], tasks: [task] });
      },
    },
  }),
};
// #endregion config
