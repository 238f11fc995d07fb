// A flow of the example project that packages/cli/README.md configures.
import { Flow, start } from '@crewline/runtime';

export class ResearchFlow extends Flow<{ topic: string }> {
  initialState = { topic: 'tides' };

  @start()
  research() {
    return `research on ${this.state.topic}`;
  }
}
