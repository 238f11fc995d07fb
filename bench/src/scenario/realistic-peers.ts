// The peers the realistic benchmark runs beside crewline, fed the very states crewline checkpointed,
// in the same process and the same run: LangGraph's SqliteSaver (every checkpoint stores the whole
// state) and Mastra's LibSQLStore (one workflow snapshot per run, replaced at each checkpoint: the
// "latest snapshot only" design). Each times its own call only.
import { join } from 'node:path';
import type { EventRecord } from '@crewline/events';
import type { EncodedValue, EntitySnapshot } from '@crewline/runtime-state';
import { storedBytesOf } from '../storage-subjects.js';

/** A run's state at one checkpoint, as crewline handed it to its provider. */
export interface PeerState {
  inputs: EncodedValue;
  entities: readonly EntitySnapshot[];
  events: readonly EventRecord[];
}

/** A storage a peer framework would use, fed one state per checkpoint. */
export interface Peer {
  name: string;
  /** Stores `state`; resolves with the milliseconds its own call took. */
  put(state: PeerState): Promise<number>;
  /** Milliseconds to load its latest checkpoint of the run back (what a restore reads). */
  restoreLatest(): Promise<number>;
  /** Closes it; resolves with the bytes it keeps on disk. */
  close(): Promise<number>;
}

/** LangGraph's `SqliteSaver.put`, with the state as a graph's channel values (one thread per run). */
export async function openLangGraphPeer(directory: string, thread: string): Promise<Peer> {
  const [{ SqliteSaver }, { uuid6 }, { default: Database }] = await Promise.all([
    import('@langchain/langgraph-checkpoint-sqlite'),
    import('@langchain/langgraph-checkpoint'),
    import('better-sqlite3'),
  ]);
  const location = join(directory, 'langgraph.sqlite');
  const database = new Database(location);
  const saver = new SqliteSaver(database);
  let parentId: string | undefined;
  let step = 0;
  return {
    name: 'LangGraph SqliteSaver.put',
    async put(state) {
      const checkpoint = {
        v: 4,
        id: uuid6(step),
        ts: new Date().toISOString(),
        channel_values: { inputs: state.inputs, entities: state.entities, events: state.events },
        channel_versions: { inputs: 1, entities: step + 1, events: step + 1 },
        versions_seen: {},
      };
      const config = { configurable: { thread_id: thread, checkpoint_ns: '', checkpoint_id: parentId } };
      const started = performance.now();
      const next = await saver.put(config, checkpoint, { source: 'loop', step, parents: {} });
      const elapsed = performance.now() - started;
      parentId = next.configurable?.checkpoint_id as string;
      step += 1;
      return elapsed;
    },
    async restoreLatest() {
      const started = performance.now();
      const tuple = await saver.getTuple({ configurable: { thread_id: thread } });
      const elapsed = performance.now() - started;
      if (tuple === undefined) throw new Error(`LangGraph peer: no checkpoint in thread ${thread}`);
      return elapsed;
    },
    async close() {
      database.close();
      return storedBytesOf(location);
    },
  };
}

/**
 * Mastra's `LibSQLStore.persistWorkflowSnapshot` (`@mastra/libsql` 0.16, its 0.x line on Node 20):
 * the state as the context of the run's workflow snapshot, which each call replaces.
 */
export async function openMastraPeer(directory: string, runId: string): Promise<Peer> {
  const { LibSQLStore } = await import('@mastra/libsql');
  const location = join(directory, 'mastra.db');
  const store = new LibSQLStore({ url: `file:${location}` });
  await store.init();
  const workflowName = 'realistic-report';
  return {
    name: 'Mastra LibSQLStore.persistWorkflowSnapshot',
    async put(state) {
      const snapshot = {
        runId,
        status: 'running',
        value: {},
        context: { input: { inputs: state.inputs }, entities: state.entities, events: state.events },
        serializedStepGraph: [],
        activePaths: [],
        activeStepsPath: {},
        suspendedPaths: {},
        resumeLabels: {},
        waitingPaths: {},
        timestamp: Date.now(),
      };
      const started = performance.now();
      // The snapshot's context holds our entities rather than Mastra step results: the store
      // serializes it whole either way, which is the cost measured.
      await store.persistWorkflowSnapshot({ workflowName, runId, snapshot: snapshot as never });
      return performance.now() - started;
    },
    async restoreLatest() {
      const started = performance.now();
      const snapshot = await store.loadWorkflowSnapshot({ workflowName, runId });
      const elapsed = performance.now() - started;
      if (snapshot === null) throw new Error(`Mastra peer: no snapshot of run ${runId}`);
      return elapsed;
    },
    async close() {
      (store as unknown as { client: { close(): void } }).client.close();
      return storedBytesOf(location);
    },
  };
}
