// A checkpoint's event history as a timeline: one line per event (time, type, who), each opening
// to the whole event as recorded. Payloads are fetched when opened: a long run keeps thousands.
import { formatClock, h, replace } from './dom.js';

/**
 * The timeline section. `loadEvent(sequence)` resolves to the event's whole record (already
 * redacted by the runtime when it was recorded).
 */
export function timelineView(detail, loadEvent) {
  const hidden = detail.eventCount - detail.events.length;
  return h(
    'section',
    { class: 'timeline' },
    h('h3', null, `Events (${detail.eventCount})`),
    hidden > 0
      ? h('p', { class: 'muted' }, `the newest ${detail.events.length} of ${detail.eventCount}`)
      : null,
    h(
      'ol',
      null,
      detail.events.map((event) => {
        const payload = h('pre', { class: 'payload' });
        const item = h(
          'details',
          { class: 'event-line' },
          h(
            'summary',
            null,
            h('time', null, formatClock(event.timestamp)),
            h('span', { class: 'event-type' }, event.type),
            event.subject ? h('span', { class: 'muted' }, event.subject) : null,
          ),
          payload,
        );
        let loaded = false;
        item.addEventListener('toggle', async () => {
          if (!item.open || loaded) return;
          loaded = true;
          replace(payload, 'loading…');
          try {
            replace(payload, JSON.stringify(await loadEvent(event.sequence), null, 2));
          } catch (error) {
            loaded = false;
            replace(payload, h('span', { class: 'error' }, error.message));
          }
        });
        return h('li', { class: `event type-${event.type}`, 'data-sequence': event.sequence }, item);
      }),
    ),
  );
}
