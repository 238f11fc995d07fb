import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { expect, it } from 'vitest';
import { readmeExample } from './readme-example.js';

describeWithPostgres("the README's example", () => {
  it('enqueues a run, a worker completes it', async () => {
    const url = temporaryLocation();
    try {
      expect(await readmeExample(url)).toEqual([
        expect.stringMatching(/^completed after 1 attempt\(s\), [1-9]\d* tokens$/),
      ]);
    } finally {
      await dropLocation(url);
      const schema = new URL(url).searchParams.get('schema');
      await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    }
  });
});
