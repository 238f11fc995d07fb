// Model ids from packages/runtime/docs/models-and-tools.md, run by apps/docs-check. Resolving an id
// only checks that the key is set; no request is made, so placeholder keys are enough here.
process.env.OPENAI_API_KEY = 'placeholder-no-request-is-made';
process.env.ANTHROPIC_API_KEY = 'placeholder-no-request-is-made';

// #region resolve
import { modelIdOf, resolveModel } from '@crewline/runtime';

const model = resolveModel('openai:gpt-4o-mini'); // OPENAI_API_KEY
resolveModel('anthropic:claude-sonnet-4-5'); // ANTHROPIC_API_KEY
resolveModel('ollama:llama3.1:8b'); // OLLAMA_BASE_URL, default http://localhost:11434/v1
resolveModel('offline:tutorial'); // no network, no key
modelIdOf(model); // 'openai:gpt-4o-mini', 'anthropic:claude-sonnet-4-5', ...
// #endregion resolve

for (const id of [
  'openai:gpt-4o-mini',
  'anthropic:claude-sonnet-4-5',
  'ollama:llama3.1:8b',
  'offline:tutorial',
]) {
  console.log(`${id} -> ${modelIdOf(resolveModel(id))}`);
}
