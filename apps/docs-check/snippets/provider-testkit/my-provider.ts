// The reader's provider in packages/provider-testkit/README.md; here the JSON provider stands in for
// it, so that the README's test file and writer process are type-checked against the real testkit.
export { JsonProvider as MyProvider } from '@crewline/provider-json';
