// Model providers from packages/runtime/docs/models-and-tools.md, run by apps/docs-check. Building a
// model makes no request, so neither the proxy nor a real key is needed here.
process.env.OPENAI_API_KEY = 'placeholder-no-request-is-made';

// #region config
// crewline.config.ts
import { createOpenAI } from '@ai-sdk/openai';
import { defineConfig } from '@crewline/runtime';

const config = defineConfig({
  modelProviders: {
    // Any AI SDK provider, under the prefix of the ids it serves (google: createGoogleGenerativeAI(), ...).
    myproxy: createOpenAI({ name: 'myproxy', baseURL: 'https://llm-proxy.example.com/v1' }),
  },
});
export default config;

// #endregion config

// #region in-code
import { modelIdOf, ProjectRegistry, resolveModel } from '@crewline/runtime';

const registry = new ProjectRegistry().register(config); // what Crew.fromCheckpoint / fork take as `registry`
const model = resolveModel('myproxy:gpt-4o-mini', { modelProviders: registry.modelProviders });
modelIdOf(model, undefined, registry.modelProviders); // 'myproxy:gpt-4o-mini': what a checkpoint stores
// #endregion in-code

console.log(`${modelIdOf(model, undefined, registry.modelProviders)} -> ${model.provider}`);
