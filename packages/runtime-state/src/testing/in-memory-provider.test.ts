// The testkit is imported by path, not as `@crewline/provider-testkit`: the testkit depends on this
// package, and a dependency back would make the workspace graph cyclic.
import { describeCheckpointProvider } from '../../../provider-testkit/src/index.js';
import { InMemoryProvider } from './in-memory-provider.js';

let counter = 0;

describeCheckpointProvider({
  name: 'InMemoryProvider',
  createProvider: () => new InMemoryProvider(),
  createLocation: () => {
    counter += 1;
    return `memory-location-${counter}`;
  },
  persistent: false,
});
