// The offline model options of packages/runtime/docs/models-and-tools.md. Compiled, not run: the
// assertions are about "your crew", which the reader writes (the runtime's own tests run these options).
// #region options
import { countCalls, lastCall, offlineModel } from '@crewline/runtime/testing';
import { expect } from 'vitest';

const model = offlineModel({
  name: 'researcher', // modelId; the id is 'offline:researcher'. Default 'default'
  responseBytes: 2048, // size of a text answer in UTF-8 bytes. Default 400
  latencyMs: 50, // simulated; cut short by the abort signal. Default 0
  script: [{ toolName: 'search', input: { query: 'AI trends' } }], // tool calls to make
  failOn: [3], // the 3rd call throws (model_error). Default never
  usage: true, // token estimates, 4 characters a token. Default true
  promptCache: false, // simulate provider prompt caching. Default false
});
// ... run your crew ...
expect(countCalls(model)).toBe(4);
expect(countCalls(model, 'Research AI trends')).toBe(1); // a substring, a RegExp, or a predicate
expect(lastCall(model)?.settings).toEqual({});
// #endregion options
