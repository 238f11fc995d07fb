import { expect, it } from 'vitest';
import { describeWithPostgres, dropLocation, temporaryLocation } from '../test-support/test-server.js';
import { readmeExample } from './readme-example.js';

describeWithPostgres("the README's example", () => {
  it('runs, and prints a location without the password', async () => {
    const url = temporaryLocation();
    try {
      const printed = await readmeExample(url);
      expect(printed).toHaveLength(1);
      expect(printed[0]).toMatch(
        /^0 checkpoints listed from postgres:\/\/crewline@127\.0\.0\.1:\d+\/postgres\?schema=test_/,
      );
    } finally {
      await dropLocation(url);
    }
  });
});
