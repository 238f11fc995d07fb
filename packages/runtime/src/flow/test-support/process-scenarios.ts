// Persisted and pausing flows for the cross-process tests. Their storage location comes from the
// environment because `@persist()` options are fixed when the class is defined.
import { Flow, listen, persist, start } from '../index.js';
import { recordExecution } from './scenarios.js';

const location = process.env.CREWLINE_FLOW_TEST_LOCATION ?? './.checkpoints';

const record = recordExecution;

@persist({ location })
export class PersistentFlow extends Flow<{ value: number; log: string[] }> {
  initialState = { value: 0, log: [] as string[] };

  @start() increment() {
    record('increment');
    this.state.value += 1;
    this.state.log.push('increment');
    return this.state.value;
  }

  @listen('increment') double(value: number) {
    record('double');
    this.state.value = value * 2;
    this.state.log.push('double');
    return this.state.value;
  }

  @listen('double') async report(value: number) {
    record('report');
    await new Promise((resolve) => setTimeout(resolve, 2));
    this.state.log.push('report');
    return `value is ${value}`;
  }
}

@persist({ location })
export class PausingFlow extends Flow<{ draft: string; verdict: string }> {
  initialState = { draft: '', verdict: '' };

  @start() write() {
    record('write');
    this.state.draft = 'an essay on tides';
    return this.state.draft;
  }

  @listen('write') async approve(draft: string) {
    record('approve');
    this.state.verdict = await this.ask(`Publish "${draft}"?`);
    return this.state.verdict;
  }

  @listen('approve') publish(verdict: string) {
    record('publish');
    return verdict === 'yes' ? `published ${this.state.draft}` : 'discarded';
  }
}
