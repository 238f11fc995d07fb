// The checkpoint lifecycle: writes, prunes, forks and restores. They never trigger a checkpoint.
import { defineEvent } from '../base-event.js';

export class CheckpointStartedEvent extends defineEvent<
  'checkpoint_started',
  { location: string; provider: string; trigger: string; branch: string; parentId: string | null }
>('checkpoint_started') {}
export class CheckpointCompletedEvent extends defineEvent<
  'checkpoint_completed',
  {
    location: string;
    provider: string;
    trigger: string;
    branch: string;
    parentId: string | null;
    checkpointId: string;
    reference: string;
    durationMs: number;
  }
>('checkpoint_completed') {}
export class CheckpointFailedEvent extends defineEvent<
  'checkpoint_failed',
  {
    location: string;
    provider: string;
    trigger: string;
    branch: string;
    parentId: string | null;
    error: string;
  }
>('checkpoint_failed') {}
export class CheckpointPrunedEvent extends defineEvent<
  'checkpoint_pruned',
  { location: string; provider: string; branch: string; removedCount: number; maxCheckpoints: number }
>('checkpoint_pruned') {}
export class CheckpointForkStartedEvent extends defineEvent<
  'checkpoint_fork_started',
  { branch: string; parentBranch: string; parentCheckpointId: string | null }
>('checkpoint_fork_started') {}
export class CheckpointForkCompletedEvent extends defineEvent<
  'checkpoint_fork_completed',
  { branch: string; parentBranch: string; parentCheckpointId: string | null }
>('checkpoint_fork_completed') {}
export class CheckpointRestoreStartedEvent extends defineEvent<
  'checkpoint_restore_started',
  { reference: string }
>('checkpoint_restore_started') {}
export class CheckpointRestoreCompletedEvent extends defineEvent<
  'checkpoint_restore_completed',
  { reference: string; checkpointId: string; branch: string; parentId: string | null; durationMs: number }
>('checkpoint_restore_completed') {}
export class CheckpointRestoreFailedEvent extends defineEvent<
  'checkpoint_restore_failed',
  { reference: string; error: string }
>('checkpoint_restore_failed') {}
