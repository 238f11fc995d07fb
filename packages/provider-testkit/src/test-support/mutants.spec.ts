// Not a test of this package on its own: testkit.test.ts runs it in a child vitest and checks that
// every mutant provider fails at least one test of the suite.
import { describeCheckpointProvider } from '../index.js';
import { mutants } from './mutant-providers.js';

let counter = 0;
for (const [name, create] of Object.entries(mutants)) {
  describeCheckpointProvider({
    name: `mutant: ${name}`,
    createProvider: create,
    createLocation: () => {
      counter += 1;
      return `mutant-location-${counter}`;
    },
    persistent: false,
  });
}
