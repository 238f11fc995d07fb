export { JsonProvider } from './json-provider.js';
export type { JsonProviderOptions, ResolvedJsonProviderOptions } from './options.js';
