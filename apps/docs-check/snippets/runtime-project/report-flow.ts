// A flow of the example project that packages/runtime/README.md configures.
import { Flow, start } from '@crewline/runtime';

export class ReportFlow extends Flow<{ topic: string }> {
  initialState = { topic: 'tides' };

  @start()
  report() {
    return `a report on ${this.state.topic}`;
  }
}
