import { AsyncLocalStorage } from 'node:async_hooks';
import type { CheckpointableEntity, RuntimeState } from '@crewline/runtime-state';

/** Who is told of the entities that join a run in an async context (see {@link watchEntityJoins}). */
type JoinWatcher = (entity: CheckpointableEntity, state: RuntimeState) => void;

const joinWatcher = new AsyncLocalStorage<JoinWatcher>();

/**
 * Runs `body`, calling `onJoin` with each entity that joins a run from inside it (a crew, agent or
 * flow kicked off in a flow method, or work a restored flow keeps for its completed methods) and the
 * state of the run it joins, as it joins. The async context, not the time, says whose it is: a flow
 * method is credited with the crews it ran itself, not with those of a method running beside it.
 * Watchers nest: a method of a flow kicked off in another flow's method is watched by both.
 */
export function watchEntityJoins<T>(onJoin: JoinWatcher, body: () => T): T {
  const outer = joinWatcher.getStore();
  const watcher: JoinWatcher =
    outer === undefined
      ? onJoin
      : (entity, state) => {
          outer(entity, state);
          onJoin(entity, state);
        };
  return joinWatcher.run(watcher, body);
}

/** Adds `entity` to the run of `state` and tells the watchers of the caller's context. */
export function joinRun(state: RuntimeState, entity: CheckpointableEntity): void {
  state.addEntity(entity);
  joinWatcher.getStore()?.(entity, state);
}
