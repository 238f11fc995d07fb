export { InMemoryProvider } from './in-memory-provider.js';
