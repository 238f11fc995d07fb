// The flow of packages/runtime/README.md, run by apps/docs-check.
// #region flow
import { Flow, listen, start } from '@crewline/runtime';

class MyFlow extends Flow<{ count: number }> {
  @start() stepOne() {
    return 'data';
  }
  @listen('stepOne') stepTwo(data: string) {
    return data.toUpperCase();
  }
}
const flow = new MyFlow({ checkpoint: { location: './flow_cp', onEvents: ['method_execution_finished'] } });
await flow.kickoff();
const again = await MyFlow.fromCheckpoint({ restoreFrom: './flow_cp' });
// #endregion flow

console.log(`${again.constructor.name} restored from ./flow_cp`);
