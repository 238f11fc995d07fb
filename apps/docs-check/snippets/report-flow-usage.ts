// Calls shown in packages/runtime/docs/flow-state-persistence.md. Compiled, not run here: the guide's
// own test (packages/runtime/src/flow/examples/report-flow.test.ts) runs these steps and counts the
// model calls.
import {
  ReportFlow,
  rerunAfter,
  runReport,
} from '../../../packages/runtime/src/flow/examples/report-flow.js';

export async function restartAfterACrash() {
  // #region restart
  await runReport('tides-report'); // dies in draft (Ctrl+C, a crash, a rate limit)
  await runReport('tides-report'); // continues at draft; research and outline are not run again
  // #endregion restart
}

export async function rerunTheLaterSteps() {
  // #region rerun
  await rerunAfter('tides-report', 'outline'); // runs draft and edit only
  // #endregion rerun
}

export async function answerAPause() {
  const result = await runReport('tides-report');
  if (result.status !== 'paused') return;
  // #region resume
  await ReportFlow.resume({ id: 'tides-report' }, 'yes'); // persisted flows: by state id
  // Any flow that checkpoints: by reference (undefined when the flow saves nothing).
  if (result.pause.resumeFrom) await ReportFlow.resume(result.pause.resumeFrom, 'yes');
  // #endregion resume
}
