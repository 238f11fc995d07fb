export { memoProviderEntry } from './memo-entry.js';
export { MemoProvider, type MemoProviderOptions } from './memo-provider.js';
