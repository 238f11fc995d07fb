// Two checkpoints side by side: changed fields, inputs and task outputs as aligned line diffs, the
// flow state path by path.
import { formatTime, h, valueText } from './dom.js';

function sideBySide(rows) {
  return h(
    'table',
    { class: 'side-by-side' },
    rows.map((row) =>
      h(
        'tr',
        { class: row.kind },
        h('td', { class: 'left' }, row.left ?? ''),
        h('td', { class: 'right' }, row.right ?? ''),
      ),
    ),
  );
}

function fieldText(change, value) {
  if (value === null || value === undefined) return '(none)';
  return change.field === 'time' ? formatTime(String(value)) : String(value);
}

/** The diff panel's contents for a comparison from `/api/diff`. */
export function diffView(diff) {
  const same =
    diff.fields.length === 0 &&
    diff.inputs.length === 0 &&
    diff.tasks.length === 0 &&
    diff.state.length === 0;
  return h(
    'div',
    { class: 'diff' },
    h('h2', null, 'Compare'),
    h(
      'table',
      { class: 'diff-heads' },
      h('tr', null, h('th', null, 'A'), h('td', null, h('code', null, diff.from))),
      h('tr', null, h('th', null, 'B'), h('td', null, h('code', null, diff.to))),
    ),
    same ? h('p', null, 'The two checkpoints are the same.') : null,
    diff.fields.length > 0
      ? h(
          'table',
          { class: 'fields' },
          h('tr', null, h('th', null, ''), h('th', null, 'A'), h('th', null, 'B')),
          diff.fields.map((change) =>
            h(
              'tr',
              null,
              h('th', null, change.field),
              h('td', null, fieldText(change, change.from)),
              h('td', null, fieldText(change, change.to)),
            ),
          ),
        )
      : null,
    diff.inputs.length > 0 ? h('h3', null, 'Inputs') : null,
    diff.inputs.map((input) =>
      h(
        'section',
        { class: `input-change ${input.change}` },
        h('h4', null, `${input.key} (${input.change})`),
        sideBySide(input.rows),
      ),
    ),
    diff.tasks.length > 0 ? h('h3', null, 'Tasks') : null,
    diff.tasks.map((task) =>
      h(
        'section',
        { class: 'task-change', 'data-task': task.index + 1 },
        h(
          'h4',
          null,
          `${task.index + 1}. ${task.descriptionAsRun ?? task.description} — `,
          task.fromStatus === task.toStatus
            ? `${task.toStatus}, output changed`
            : `${task.fromStatus ?? '(absent)'} → ${task.toStatus ?? '(absent)'}`,
        ),
        task.rows.length > 0 ? sideBySide(task.rows) : null,
      ),
    ),
    diff.state.length > 0 ? h('h3', null, 'Flow state') : null,
    diff.state.length > 0
      ? h(
          'table',
          { class: 'state-changes' },
          diff.state.map((change) =>
            h(
              'tr',
              { class: change.change },
              h('th', null, change.path),
              h(
                'td',
                { class: 'left' },
                change.change === 'added' ? '' : h('pre', null, valueText(change.from)),
              ),
              h(
                'td',
                { class: 'right' },
                change.change === 'removed' ? '' : h('pre', null, valueText(change.to)),
              ),
            ),
          ),
        )
      : null,
  );
}
