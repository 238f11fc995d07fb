/**
 * Branch prefix `@persist()` writes a state's saves on (`flow-states/<state id>`, the runtime's
 * STATE_BRANCH_PREFIX), kept here so the CLI tells a persisted state from a flow that was only
 * checkpointed without loading the runtime.
 */
const PERSISTED_BRANCH_PREFIX = 'flow-states/';

/** True for the branch of a persisted flow state. */
export function isPersistedStateBranch(branch: string): boolean {
  return branch.startsWith(PERSISTED_BRANCH_PREFIX);
}
