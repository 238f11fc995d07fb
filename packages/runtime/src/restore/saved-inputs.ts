import { type CheckpointDocument, decodeValue } from '@crewline/runtime-state';

/** The kickoff inputs a checkpoint holds, as a record. */
export function savedInputs(document: CheckpointDocument): Record<string, unknown> {
  const saved = decodeValue<unknown>(document.inputs);
  return saved !== null && typeof saved === 'object' ? (saved as Record<string, unknown>) : {};
}
