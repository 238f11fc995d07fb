/**
 * `crew Research`, `flow Pipeline`; an entity whose name is its kind (the runtime names a crew
 * without a name "crew") is said once: `crew`, not `crew crew`.
 */
export function entityLabel(kind: string, name: string): string {
  return name === kind || name === '' ? kind : `${kind} ${name}`;
}
