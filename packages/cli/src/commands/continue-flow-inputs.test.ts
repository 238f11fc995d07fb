// Review r1 of 5fd3465: a flow whose state holds a credential is continued with it given again
// (`--input apiKey=<value>`, as the refusal says), and the command sent every saved kickoff input
// with it: merged into the state again, they undid what completed methods made of those fields.
import { join } from 'node:path';
import { Flow, listen, registerProject, start } from '@crewline/runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

const secret = 'sk-live-0123456789abcdefghij';
/** What `report` read of the count and the key, in order. */
const read: unknown[] = [];

/** Its count comes from the kickoff inputs and the completed `bump` adds 10 to it. */
class ResumedCounterFlow extends Flow<{ count: number; apiKey: string }> {
  initialState = { count: 0, apiKey: '' };
  @start() bump() {
    this.state.count += 10;
    return 'bumped';
  }
  @listen('bump') async report() {
    await this.ask('Report?');
    read.push({ count: this.state.count, key: this.state.apiKey === secret ? 'the key' : this.state.apiKey });
    return `count ${this.state.count}`;
  }
}
registerProject({ flows: { ResumedCounterFlow } });

describe('checkpoint resume --input of a flow', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>> | undefined;
  afterAll(async () => {
    await project?.remove();
  });

  it('merges only the inputs given into the state: what completed methods changed stays', async () => {
    project = await temporaryDirectory('crewline-continue-flow-inputs-');
    const location = join(project.path, '.checkpoints');
    const paused = await new ResumedCounterFlow({ checkpoint: { location } }).kickoff({
      inputs: { count: 1, apiKey: secret },
    });
    const reference = paused.pause!.resumeFrom!;
    const result = await runCommand(
      ['checkpoint', 'resume', reference, '--answer', 'yes', '--input', `apiKey=${secret}`],
      { cwd: project.path },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(read).toEqual([{ count: 11, key: 'the key' }]);
  });
});
