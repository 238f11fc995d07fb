// Hostile values in the fields that decide how a checkpoint is read and where a resumed run writes:
// the format version, the names that become paths (ids, branch, lineage, the stored location) and
// the shape of the kickoff inputs.
import { join } from 'node:path';
import { CHECKPOINT_FORMAT_VERSION } from '@crewline/runtime-state';
import { checkpointText } from './checkpoint-text.js';
import type { JsonMutation } from './json-mutation.js';
import { describePath, type JsonPath, replaceAt, valueAt } from './json-paths.js';
import { integerBetween, pick } from './random-tools.js';

function parsed(text: string): Record<string, unknown> {
  return JSON.parse(text) as Record<string, unknown>;
}

/** A format version from a newer crewline (most cases), or an impossible one. */
export const formatVersions: JsonMutation = {
  name: 'newer-format-version',
  description:
    'formatVersion newer than the code understands (2 to 2^31), or impossible (1.5, -1, 0, "1", null)',
  mutate(seed, random) {
    const document = parsed(seed.text);
    const value =
      random() < 0.7
        ? pick(random, [
            CHECKPOINT_FORMAT_VERSION + 1,
            CHECKPOINT_FORMAT_VERSION + integerBetween(random, 2, 1000),
            2 ** 31,
            1e300,
          ])
        : pick(random, [1.5, -1, 0, '1', null]);
    document.formatVersion = value;
    if (random() < 0.3) document.libraryVersion = '99.0.0';
    return { content: checkpointText(document), detail: `formatVersion = ${JSON.stringify(value)}` };
  },
};

/** Names that climb out of a directory, or name one elsewhere, once joined to a path. */
function traversalNames(root: string): string[] {
  return [
    '..',
    '../escaped',
    '../../escaped',
    '../../../../escaped',
    'main/../../escaped',
    'a/../../../escaped',
    '..\\..\\escaped',
    '%2e%2e/escaped',
    './../escaped',
    'escaped/..',
    `${join(root, 'escaped-absolute')}`,
    '/',
    '',
    'main\u0000../../escaped',
  ];
}

/** The fields a path can be built from, in a crew's or a flow's checkpoint. */
const nameFields: JsonPath[] = [
  ['metadata', 'id'],
  ['metadata', 'parentId'],
  ['metadata', 'branch'],
  ['metadata', 'lineageId'],
  ['entities', 0, 'id'],
  ['entities', 0, 'name'],
  ['entities', 0, 'registryName'],
  ['entities', 0, 'data', 'checkpoint', 'location'],
  ['entities', 0, 'data', 'stateId'],
  ['entities', 0, 'data', 'state', 'json', 'id'],
  ['inputs', 'json', 'id'],
];

/**
 * A traversal name (`../`, an absolute path under the case's directory, a NUL) in an id, the
 * branch, the lineage, an entity's name or id, the stored checkpoint location or a flow's state id;
 * a third of the files are put in the location as standalone checkpoints, which JsonProvider reads
 * without matching the name against the file's place.
 */
export const traversalNameMutation: JsonMutation = {
  name: 'traversal-names',
  description:
    '`../`, absolute paths and NUL in ids, branch, lineageId, entity names, the stored location, flow state ids',
  mutate(seed, random, sandbox) {
    const document = parsed(seed.text);
    const fields = nameFields.filter((path) => valueAt(document, path.slice(0, -1)) !== undefined);
    const path = pick(random, fields);
    const value = pick(random, traversalNames(sandbox.root));
    replaceAt(document, path, value);
    const standalone = random() < 1 / 3;
    return {
      content: checkpointText(document),
      detail: `${describePath(path)} = ${JSON.stringify(value)}${standalone ? ' (standalone file)' : ''}`,
      standalone,
    };
  },
};

const inputShapes: unknown[] = [
  'topic=tidal energy',
  ['tidal energy'],
  42,
  null,
  {},
  { json: 'tidal energy' },
  { json: ['tidal', 'energy'] },
  { json: null },
  { json: 7 },
  { json: { topic: ['tidal', 'energy'] } },
  { json: { topic: { nested: true } } },
  { json: { id: ['a'] } },
  { json: {}, meta: 'not an object' },
];

/** The kickoff inputs as a string, an array, a number... or with non-string values inside. */
export const inputShapeMutation: JsonMutation = {
  name: 'inputs-shapes',
  description: 'kickoff inputs as a string, array, number or null, or with arrays/objects where strings were',
  mutate(seed, random) {
    const document = parsed(seed.text);
    const value = pick(random, inputShapes);
    document.inputs = value;
    return { content: checkpointText(document), detail: `inputs = ${JSON.stringify(value)}` };
  },
};
