import type {
  CheckpointableEntity,
  EntitySnapshot,
  EntitySummary,
  JsonObject,
} from '@crewline/runtime-state';

/** One line of the list. */
export interface ShoppingItem {
  name: string;
  quantity: number;
  bought: boolean;
}

/**
 * A tiny entity of our own: what `RuntimeState` writes into each checkpoint. Anything with a kind, an
 * id, a name, a JSON snapshot and a one-line summary can be checkpointed; crews, flows and agents of
 * `@crewline/runtime` are such entities too.
 */
export class ShoppingList implements CheckpointableEntity {
  // Stored as a flow: the CLI then lists it as "flow shopping-list 1/3".
  readonly entityKind = 'flow' as const;
  readonly entityId: string;
  readonly entityName = 'shopping-list';
  items: ShoppingItem[];

  constructor(id: string, items: ShoppingItem[] = []) {
    this.entityId = id;
    this.items = items;
  }

  add(name: string, quantity = 1): void {
    this.items.push({ name, quantity, bought: false });
  }

  buy(name: string): void {
    for (const item of this.items) if (item.name === name) item.bought = true;
  }

  snapshotEntity(): EntitySnapshot {
    const data: JsonObject = { items: this.items.map((item) => ({ ...item })) };
    return { kind: this.entityKind, id: this.entityId, name: this.entityName, data };
  }

  summarizeEntity(): EntitySummary {
    return {
      kind: this.entityKind,
      id: this.entityId,
      name: this.entityName,
      status: this.items.every((item) => item.bought) ? 'completed' : 'running',
      completed: this.items.filter((item) => item.bought).length,
      total: this.items.length,
    };
  }

  /** The list as saved in a checkpoint. */
  static fromSnapshot(snapshot: EntitySnapshot): ShoppingList {
    const saved = Array.isArray(snapshot.data.items)
      ? (snapshot.data.items as unknown as ShoppingItem[])
      : [];
    // Copies, so that working on the restored list never changes the loaded document.
    return new ShoppingList(
      snapshot.id,
      saved.map((item) => ({ ...item })),
    );
  }
}
