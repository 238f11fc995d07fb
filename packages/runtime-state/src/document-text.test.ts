import { describe, expect, it } from 'vitest';
import { CHECKPOINT_FORMAT } from './document.js';
import { documentHeader, documentTextAround, documentTextSize, joinDocumentText } from './document-text.js';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

describe('documentTextSize', () => {
  it('equals the size of the text joinDocumentText lays out, empty lists and unicode included', () => {
    const header = documentHeader(1, '0.1.0', '{"id":"ü"}');
    expect(header.startsWith(`"format": "${CHECKPOINT_FORMAT}"`)).toBe(true);
    const cases = [
      { entities: [], events: [] },
      { entities: ['{\n  "a": "é"\n}'], events: ['{"type":"x"}'] },
      { entities: ['{}', '[\n  1\n]', '"ß€"'], events: ['{"type":"a"}', '{"type":"b→"}', '1'] },
    ];
    for (const { entities, events } of cases) {
      const inputs = '{"json":{"topic":"naïve"}}';
      const text = joinDocumentText({ header, inputs, entities, events });
      expect(
        documentTextSize({
          headerBytes: bytes(header),
          inputsBytes: bytes(inputs),
          entityBytes: entities.map(bytes),
          eventCount: events.length,
          eventBytes: events.reduce((total, event) => total + bytes(event), 0),
        }),
      ).toBe(bytes(text));
      const around = documentTextAround({ header, inputs, entities }, events.length);
      expect(`${around.before}${events.join(around.separator)}${around.after}`).toBe(text);
    }
  });
});
