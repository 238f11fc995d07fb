import { randomUUID } from 'node:crypto';
import { MethodExecutionFinishedEvent } from '@crewline/events';
import * as providerJson from '@crewline/provider-json';
import * as providerSqlite from '@crewline/provider-sqlite';
import {
  builtinProviders,
  type CheckpointProvider,
  createProviderRegistry,
  type LoadedCheckpoint,
  loadCheckpoint,
  RuntimeState,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { ShoppingList } from './shopping-list.js';

/**
 * The built-in provider entries, for `loadCheckpoint` to pick the one that claims a reference. Both
 * packages are imported here already; anything else (Postgres) would be imported on first use.
 */
export const catalog = createProviderRegistry(
  builtinProviders({
    importModule: (specifier) => import(specifier),
    modules: { '@crewline/provider-json': providerJson, '@crewline/provider-sqlite': providerSqlite },
  }),
);

/** What one pass of the example did, for printing and for the test. */
export interface ExampleReport {
  provider: string;
  location: string;
  written: StoredCheckpoint[];
  listed: StoredCheckpoint[];
  /** The checkpoint restored, and the list as it came back. */
  restored: { reference: string; items: string[] };
  /** The write made by the restored state: its parent is the restored checkpoint. */
  continued: StoredCheckpoint;
}

function step(state: RuntimeState, list: ShoppingList, method: string): void {
  // Events go into the run's history, which every checkpoint carries.
  state.recordEvent(new MethodExecutionFinishedEvent({ flowName: list.entityName, methodName: method }));
}

/**
 * Writes, lists and restores checkpoints of a small entity with `RuntimeState` and one provider:
 * three checkpoints on `main`, a fork, a listing, a restore of the first one and a write that
 * continues from it.
 */
export async function runStorageExample(
  provider: CheckpointProvider,
  location: string,
): Promise<ExampleReport> {
  // 1. A run: the entities it holds, its inputs, and where checkpoints go.
  const list = new ShoppingList(randomUUID());
  const state = new RuntimeState({ entities: [list], inputs: { store: 'corner shop' }, provider, location });
  const written: StoredCheckpoint[] = [];

  list.add('bread');
  list.add('apples', 6);
  step(state, list, 'plan');
  // Synchronous write (both providers can); it throws if the write fails.
  written.push(state.writeCheckpointSync({ trigger: 'method_execution_finished' }));

  list.buy('bread');
  step(state, list, 'buy_bread');
  // Asynchronous write; each write names the previous one as its parent.
  written.push(await state.writeCheckpoint({ trigger: 'method_execution_finished' }));

  // 2. A fork: a new branch and lineage; its first write names the last checkpoint as parent.
  state.fork('what-if');
  list.add('cheese');
  step(state, list, 'add_cheese');
  written.push(await state.writeCheckpoint({ trigger: 'manual' }));

  // 3. List: metadata only (id, time, branch, parent, trigger, entity summaries).
  const listed = await provider.list(location);

  // 4. Restore the first checkpoint by reference, rebuild the entity, continue the run from it.
  const loaded: LoadedCheckpoint = await loadCheckpoint(written[0]!.reference, catalog);
  const restoredList = ShoppingList.fromSnapshot(loaded.document.entities[0]!);
  const restoredItems = restoredList.items.map(
    (item) => `${item.quantity} ${item.name}${item.bought ? ' (bought)' : ''}`,
  );
  const restoredState = RuntimeState.fromDocument(loaded.document, {
    entities: [restoredList],
    provider,
    location,
  });
  restoredList.buy('apples');
  step(restoredState, restoredList, 'buy_apples');
  const continued = await restoredState.writeCheckpoint({ trigger: 'method_execution_finished' });

  return {
    provider: provider.kind,
    location: provider.resolveLocation(location),
    written,
    listed,
    restored: { reference: loaded.checkpoint.reference, items: restoredItems },
    continued,
  };
}
