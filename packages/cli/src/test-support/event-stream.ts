/** One server-sent event as received. */
export interface ReceivedEvent {
  event: string;
  data: unknown;
}

/**
 * Listens to an explorer's event stream (`/api/events`) the way a page does, collecting each event.
 * `next(predicate)` waits for the first event, received or still to come, that matches.
 */
export async function openEventStream(
  port: number,
  token: string,
): Promise<{
  received: ReceivedEvent[];
  next(predicate: (event: ReceivedEvent) => boolean, timeoutMs?: number): Promise<ReceivedEvent>;
  close(): void;
}> {
  const controller = new AbortController();
  const response = await fetch(`http://127.0.0.1:${port}/api/events`, {
    headers: { 'x-crewline-token': token },
    signal: controller.signal,
  });
  if (!response.ok || !response.body) throw new Error(`event stream refused: ${response.status}`);
  const received: ReceivedEvent[] = [];
  const waiting = new Set<() => void>();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    let buffer = '';
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return;
      buffer += value;
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
        const event = /^event: ?(.*)$/m.exec(block)?.[1];
        const data = /^data: ?(.*)$/m.exec(block)?.[1];
        if (event === undefined || data === undefined) continue;
        received.push({ event, data: JSON.parse(data) });
        for (const wake of waiting) wake();
      }
    }
  })();
  return {
    received,
    next: (predicate, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = received.find(predicate);
          if (!found) return;
          clearTimeout(timer);
          waiting.delete(check);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiting.delete(check);
          reject(new Error(`no matching event within ${timeoutMs} ms; received ${JSON.stringify(received)}`));
        }, timeoutMs);
        waiting.add(check);
        check();
      }),
    close: () => controller.abort(),
  };
}
