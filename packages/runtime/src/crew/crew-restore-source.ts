import { CrewlineError } from '@crewline/events';
import type { LoadedCheckpoint } from '@crewline/runtime-state';

/**
 * Refuses to rebuild a crew on its own from a flow's checkpoint (`Crew.fromCheckpoint` / `Crew.fork`,
 * `crew.kickoff({ fromCheckpoint })`).
 * The crews in it ran inside flow methods: taken out alone, one would continue without the flow state
 * it was given its inputs from, write on the flow's lineage checkpoints that hold no flow, and which of
 * several crews it got would be a guess. They continue when their flow does, as a Flow refuses a
 * crew's checkpoint.
 */
export function refuseFlowCheckpoint(
  loaded: LoadedCheckpoint,
  call: 'fromCheckpoint' | 'fork' | 'kickoff',
): void {
  const { entities, metadata } = loaded.document;
  const [owner] = entities;
  if (owner?.kind !== 'flow') return;
  const crews = entities.filter((entity) => entity.kind === 'crew').map((entity) => `"${entity.name}"`);
  const held = crews.length === 0 ? 'no crew' : `crew ${crews.join(', ')}`;
  const flowName = owner.registryName ?? owner.name;
  const restoreCall = call === 'fork' ? 'fork' : 'fromCheckpoint';
  throw new CrewlineError(
    'runtime',
    'not_found',
    `${call === 'kickoff' ? 'Crew.kickoff({ fromCheckpoint })' : `Crew.${call}`}: checkpoint ${metadata.id} is flow "${owner.name}"'s (it holds ${held} of that flow's run), not a crew's; a crew saved in a flow continues with its flow: restore the flow with its class (\`MyFlow.${restoreCall}({ restoreFrom })\`, or \`Flow.${restoreCall}\` with the class registered as "${flowName}" in crewline.config.ts) and kick it off, or run \`crewline checkpoint ${call === 'fork' ? 'fork' : 'resume'} ${metadata.id}\``,
    { details: { checkpointId: metadata.id, kind: 'flow', flowName: owner.name, crews: crews.length } },
  );
}
