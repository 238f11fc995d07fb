/**
 * A deep copy that is plain JSON data: `undefined` fields dropped, binary data as base64, dates as ISO
 * text. Conversations are stored in checkpoints as they are, so they must survive `JSON.stringify`.
 */
export function plainJson<T>(value: T): T {
  return copy(value) as T;
}

function copy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') {
    return typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint'
      ? undefined
      : value;
  }
  if (Array.isArray(value)) return value.map((item) => copy(item) ?? null);
  if (value instanceof Uint8Array)
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  if (value instanceof ArrayBuffer) return Buffer.from(value).toString('base64');
  if (value instanceof Date) return value.toISOString();
  if (value instanceof URL) return value.href;
  const result: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = copy((value as Record<string, unknown>)[key]);
    if (item !== undefined)
      Object.defineProperty(result, key, {
        value: item,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return result;
}
