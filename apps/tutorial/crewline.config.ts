// Loaded by `crewline checkpoint resume|fork` (and the browser) when run from this directory, and
// by the demo itself: it maps the model id the tutorial's checkpoints store to the tutorial's
// offline model, so continuing a checkpoint here keeps the demo's pace and its call report.
import { defineConfig } from '@crewline/runtime';
import { TUTORIAL_MODEL_ID, tutorialOfflineModel } from './src/offline-model.js';

export default defineConfig({
  models: {
    // A factory, so the model is made on first use (after the demo has read --latency); it always
    // returns the same instance, whose `calls` then count every request of the process.
    [TUTORIAL_MODEL_ID]: () => tutorialOfflineModel(),
  },
});
