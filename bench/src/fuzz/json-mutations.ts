// Every class of hostile checkpoint file the fuzz suite generates, in the order cases cycle through.
import { formatVersions, inputShapeMutation, traversalNameMutation } from './field-mutations.js';
import type { JsonMutation } from './json-mutation.js';
import {
  controlCharacterMutation,
  hugeValues,
  prototypeKeyMutation,
  wrongTypes,
} from './structure-mutations.js';
import { bitFlips, truncation } from './text-mutations.js';

export const jsonMutations: readonly JsonMutation[] = [
  truncation,
  bitFlips,
  wrongTypes,
  hugeValues,
  prototypeKeyMutation,
  formatVersions,
  traversalNameMutation,
  controlCharacterMutation,
  inputShapeMutation,
];
