import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { defineConfig, ProjectRegistry } from './project-config.js';

describe('modelPrices in crewline.config.ts', () => {
  it('is accepted as US dollars per million tokens by model id', () => {
    const config = defineConfig({
      modelPrices: {
        'openai:gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10, cachedInputPerMillion: 1.25 },
      },
    });
    expect(() => new ProjectRegistry().register(config)).not.toThrow();
  });

  it('refuses a negative or NaN price when the config is registered, naming the model id and the field', () => {
    for (const [price, problem] of [
      [-2.5, 'must not be negative'],
      [Number.NaN, 'must be a number of US dollars per million tokens'],
    ] as const) {
      let caught: unknown;
      try {
        new ProjectRegistry().register({
          modelPrices: { 'anthropic:claude-sonnet-4-5': { inputPerMillion: 3, outputPerMillion: price } },
        });
      } catch (error) {
        caught = error;
      }
      expect(CrewlineError.isInstance(caught)).toBe(true);
      expect((caught as CrewlineError).code).toBe('invalid_config');
      expect((caught as CrewlineError).message).toContain(
        `project config: modelPrices is not valid (anthropic:claude-sonnet-4-5.outputPerMillion: ${problem})`,
      );
    }
  });
});
