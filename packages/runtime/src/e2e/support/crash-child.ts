// A child process for the crash trials. Modes (argv[2]):
//   run <location> <killAfter>  run the crash crew with '*' checkpoints; after event <killAfter> (once its
//                               checkpoint is written) print "frozen" and wait to be killed
//   sigint <location>           run slowly with onEvents ['SIGINT', 'task_completed'] until a signal
//   resume <location>...        resume each location in turn (in this new process) and print one JSON
//                               line per location: the output and any model call that repeated a call
//                               whose answer was in the checkpoint resumed from
import { writeSync } from 'node:fs';
import { type BaseEvent, checkpointLifecycleEventTypes, eventBus } from '@crewline/events';
import type { CheckpointableEntity } from '@crewline/runtime-state';
import { Run } from '../../checkpointing/run.js';
import { Crew } from '../../crew/crew.js';
import type { OfflineModelCall } from '../../models/offline/offline-model.js';
import { registerProject } from '../../project-config/project-config.js';
import { crashCrew, crashInputs, crashModel } from './crash-crew.js';
import { checkpointFiles, lookupTool, readCheckpoint } from './fixtures.js';

const [mode, ...rest] = process.argv.slice(2);
const lifecycle = new Set<string>(checkpointLifecycleEventTypes);

function print(line: string): void {
  writeSync(1, `${line}\n`);
}

const quiet: CheckpointableEntity = {
  entityKind: 'agent',
  entityId: 'setup',
  entityName: 'setup',
  snapshotEntity: () => ({ kind: 'agent', id: 'setup', name: 'setup', data: {} }),
  summarizeEntity: () => ({ kind: 'agent', id: 'setup', name: 'setup' }),
};

async function run(location: string, killAfter: number): Promise<void> {
  // Starting (and ending) an empty run installs the checkpoint listener first, so that the counter
  // below sees each event after its checkpoint was written.
  await Run.execute({ root: quiet, config: undefined, inputs: {} }, async () => undefined);
  let count = 0;
  eventBus.onAny((_source: unknown, event: BaseEvent) => {
    if (lifecycle.has(event.type)) return;
    count += 1;
    if (count === killAfter) {
      // "After its checkpoint was written": JsonProvider writes automatic checkpoints in the
      // background, so what is queued is written now, as the run's exit handler would.
      Run.current()?.state.writePendingSync();
      print(`frozen ${count} ${event.type}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
    }
  });
  const model = crashModel();
  registerProject({ models: { 'crash-model': model }, tools: { lookup: lookupTool } });
  const output = await crashCrew(model, { location, onEvents: ['*'] }).kickoff({ inputs: crashInputs });
  print(`done ${count} ${JSON.stringify(output.raw)}`);
}

async function sigint(location: string): Promise<void> {
  eventBus.onAny((_source: unknown, event: BaseEvent) => {
    if (!lifecycle.has(event.type)) print(`event ${event.type}`);
  });
  const model = crashModel(300);
  registerProject({ models: { 'crash-model': model }, tools: { lookup: lookupTool } });
  await crashCrew(model, { location, onEvents: ['SIGINT', 'task_completed'] }).kickoff({
    inputs: crashInputs,
  });
  print('done');
}

function assistantTurns(call: OfflineModelCall): number {
  return call.messages.filter((message) => message.role === 'assistant').length;
}

async function resume(locations: string[]): Promise<void> {
  for (const [index, location] of locations.entries()) {
    const model = crashModel();
    registerProject({ models: { 'crash-model': model }, tools: { lookup: lookupTool } });
    const files = checkpointFiles(location);
    const latest = files.length > 0 ? readCheckpoint(files.at(-1)!) : undefined;
    const saved = (latest?.entities[0]?.data.tasks ?? []) as {
      description: string;
      status: string;
      conversation: { messages: { role: string }[] } | null;
    }[];
    // Half the trials restore into a crew built in code, half rebuild it from the checkpoint alone.
    const output = !latest
      ? await crashCrew(model, { location, onEvents: ['*'] }).kickoff({ inputs: crashInputs })
      : index % 2 === 0
        ? await crashCrew(model).kickoff({ fromCheckpoint: { restoreFrom: location } })
        : await (await Crew.fromCheckpoint({ restoreFrom: location })).kickoff();
    const repeated: string[] = [];
    for (const call of model.calls) {
      const first = JSON.stringify(call.messages[0] ?? '');
      const taskIndex = saved.findIndex((task) =>
        first.includes(`Current task: ${task.description.replace('{topic}', crashInputs.topic)}`),
      );
      const task = saved[taskIndex];
      if (!task) continue;
      const savedTurns =
        task.conversation?.messages.filter((message) => message.role === 'assistant').length ?? 0;
      if (task.status === 'completed') repeated.push(`task ${taskIndex} was completed but called again`);
      else if (assistantTurns(call) < savedTurns) {
        repeated.push(
          `task ${taskIndex}: call after ${assistantTurns(call)} turns, ${savedTurns} were saved`,
        );
      }
    }
    print(
      JSON.stringify({
        location,
        raw: output.raw,
        calls: model.calls.length,
        repeated,
        trigger: latest?.metadata.trigger ?? null,
      }),
    );
  }
}

if (mode === 'run') await run(rest[0]!, Number(rest[1]));
else if (mode === 'sigint') await sigint(rest[0]!);
else if (mode === 'resume') await resume(rest);
else throw new Error(`unknown mode ${mode}`);
