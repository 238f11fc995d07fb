// One checkpoint: summary, tokens and cost, inputs, each entity and its tasks (outputs as Markdown,
// the conversation of unfinished work), the flow state, the event timeline; with resume allowed, the
// form that edits and continues it.
import { entityLabel, formatTime, h, replace, valueText } from './dom.js';
import { renderMarkdown } from './markdown.js';
import { timelineView } from './timeline-view.js';

function row(label, value) {
  return h('tr', null, h('th', null, label), h('td', null, value));
}

function tokens(usage) {
  return `${usage.totalTokens} (${usage.inputTokens} in, ${usage.outputTokens} out${usage.cachedInputTokens ? `, ${usage.cachedInputTokens} cached` : ''})`;
}

/** A saved conversation, the messages a resume continues from. */
function conversationView(conversation, title) {
  const { messages, llmCalls, usage } = conversation;
  return h(
    'details',
    { class: 'conversation' },
    h(
      'summary',
      null,
      `${title}: ${messages.length} message${messages.length === 1 ? '' : 's'}, ${llmCalls} model call${llmCalls === 1 ? '' : 's'}, ${usage.totalTokens} tokens`,
    ),
    h(
      'ol',
      null,
      messages.map((message) =>
        h(
          'li',
          { class: `message role-${message.role}` },
          h('span', { class: 'role' }, message.role),
          h('pre', null, message.text),
        ),
      ),
    ),
  );
}

function taskView(task) {
  return h(
    'article',
    { class: `task status-${task.status}`, 'data-task': task.number },
    h(
      'header',
      null,
      h('span', { class: `badge status-${task.status}` }, task.status),
      ` ${task.number}. `,
      h('strong', null, task.name ?? task.description),
      task.agentRole ? h('span', { class: 'muted' }, ` · ${task.agentRole}`) : null,
      task.usage ? h('span', { class: 'muted' }, ` · ${task.usage.totalTokens} tokens`) : null,
      task.edited ? h('span', { class: 'badge edited' }, 'edited') : null,
    ),
    task.name ? h('p', { class: 'muted description' }, task.description) : null,
    task.output !== undefined ? h('div', { class: 'output' }, renderMarkdown(task.output)) : null,
    task.conversation ? conversationView(task.conversation, 'Conversation so far') : null,
  );
}

function entityView(entity) {
  return h(
    'section',
    { class: 'entity' },
    h(
      'h3',
      null,
      entityLabel(entity.kind, entity.name),
      entity.status ? h('span', { class: `badge status-${entity.status}` }, entity.status) : null,
    ),
    entity.kind === 'flow'
      ? [
          h('p', null, 'Completed methods: ', entity.completedMethods.join(', ') || '(none)'),
          h('h4', null, 'Flow state'),
          h('pre', { class: 'state' }, JSON.stringify(entity.state ?? {}, null, 2)),
        ]
      : null,
    entity.conversation ? conversationView(entity.conversation, 'Conversation') : null,
    entity.tasks.map(taskView),
  );
}

/** The tasks a continuation will run, and why each; for a flow, what it does with its methods. */
function planView(plan) {
  // A flow's due methods may run crews the checkpoint does not hold yet: no task list says all.
  const flow = plan.flow ? h('p', { class: 'muted flow-methods' }, plan.flow.note) : undefined;
  // A resume of a checkpoint its run went past: a new branch, and tasks paid for again, said first.
  const older = plan.olderCheckpoint
    ? h('p', { class: 'warning older-checkpoint' }, plan.olderCheckpoint.note)
    : undefined;
  if (plan.runs.length === 0)
    return [
      older,
      h(
        'p',
        { class: 'muted' },
        plan.flow
          ? 'Will run: no task this checkpoint holds.'
          : 'Will run: nothing, every task is completed.',
      ),
      flow,
    ];
  return [
    older,
    h('h4', null, `Will run (${plan.runs.length})`),
    h(
      'ul',
      null,
      plan.runs.map((task) =>
        h(
          'li',
          { 'data-task': task.number, class: `planned reason-${task.reason}` },
          `${task.number}. `,
          h('strong', null, task.name ?? task.description),
          h('span', { class: 'muted' }, ` · ${task.note}`),
        ),
      ),
    ),
    flow,
  ];
}

/** The form that forks or resumes the checkpoint, optionally with changed inputs and task outputs. */
function runForm(detail, onRun, onPlan) {
  const inputFields = Object.entries(detail.inputs).map(([key, value]) => {
    const field = h('textarea', { rows: 1, 'data-input': key, class: 'input-field' });
    field.value = valueText(value);
    return { key, value, field };
  });
  const outputFields = [];
  for (const entity of detail.entities)
    for (const task of entity.tasks)
      if (task.status === 'completed') {
        const field = h('textarea', { rows: 4, 'data-output': task.number, class: 'output-field' });
        field.value = task.output ?? '';
        outputFields.push({ task, field });
      }
  const mode = h(
    'select',
    { name: 'mode' },
    h('option', { value: 'fork' }, 'fork onto a new branch'),
    h('option', { value: 'resume' }, 'resume on its branch'),
  );
  const branch = h('input', { name: 'branch', placeholder: 'new branch name (optional)' });
  mode.addEventListener('change', () => {
    branch.disabled = mode.value !== 'fork';
  });
  // A flow paused by ask(): its question, and the answer the run gives it (the CLI's --answer).
  const paused = detail.entities.find((entity) => entity.kind === 'flow' && entity.pause);
  const answer = paused ? h('textarea', { rows: 2, name: 'answer', class: 'answer-field' }) : undefined;
  const message = h('p', { class: 'form-message', role: 'status' });
  const plan = h('div', { class: 'rerun-plan', 'aria-live': 'polite' });
  const changedOutputs = () =>
    outputFields
      .filter(({ task, field }) => field.value !== (task.output ?? ''))
      .map(({ task, field }) => `${task.number}=${field.value}`);
  // As /api/runs takes them: text as typed for a string input, JSON for any other.
  const changedInputs = () =>
    inputFields
      .filter(({ value, field }) => field.value !== valueText(value))
      .map(({ key, value, field }) =>
        typeof value === 'string' ? `${key}=${field.value}` : `${key}:=${field.value}`,
      );
  // What will run, from the server's copy of the rebuild rules: asked again as outputs and inputs are
  // edited (a changed input starts an interrupted task over).
  let asked = 0;
  // The run's latest when the plan shown was made (a resume's): sent with the run, so that a run
  // another process went on with while the plan was read is refused rather than paid for again.
  let plannedHead;
  // False while the plan shown is not yet the one for the form's mode (a request under way).
  let planShown = false;
  const refreshPlan = async () => {
    const ask = ++asked;
    const planned = mode.value;
    planShown = false;
    try {
      const answer = await onPlan({ outputs: changedOutputs(), inputs: changedInputs(), mode: planned });
      if (ask !== asked) return;
      plannedHead = planned === 'resume' ? (answer.olderCheckpoint?.headId ?? detail.metadata.id) : undefined;
      replace(plan, planView(answer));
    } catch (error) {
      if (ask !== asked) return;
      plannedHead = undefined;
      replace(plan, h('p', { class: 'error' }, error.message));
    }
    plan.dataset.planned = planned;
    planShown = true;
  };
  let pending;
  for (const { field } of [...outputFields, ...inputFields])
    field.addEventListener('input', () => {
      clearTimeout(pending);
      pending = setTimeout(() => {
        planning = refreshPlan();
      }, 250);
    });
  // The plan request under way: Run pressed before it answered runs nothing — it waits for the plan
  // and asks to press Run again once it is shown. Pressed at once after switching to resume, the run
  // went without the plan's head, and one another process went on with meanwhile was resumed on a new
  // branch (paying again) under a plan the user had not seen.
  let planning = refreshPlan();
  // Asked in the form's mode: a fork of a finished run is refused where a resume gives its output back.
  mode.addEventListener('change', () => {
    planning = refreshPlan();
  });
  const form = h(
    'form',
    { class: 'run-form' },
    h('h3', null, 'Continue from here'),
    h('label', null, 'Mode ', mode),
    h('label', null, 'Branch ', branch),
    paused
      ? h(
          'label',
          { class: 'block answer' },
          `Answer to ${paused.pause.method}: `,
          h('strong', { class: 'question' }, paused.pause.message),
          answer,
          h('span', { class: 'muted' }, 'Left empty, the flow asks again and the run pauses once more.'),
        )
      : null,
    inputFields.length > 0 ? h('h4', null, 'Inputs') : null,
    inputFields.length > 0
      ? h(
          'p',
          { class: 'muted' },
          'A changed input reaches the tasks that run; completed tasks keep their outputs unless one before them is edited, and a task interrupted mid-way starts over.',
        )
      : null,
    inputFields.map(({ key, field }) => h('label', { class: 'block' }, key, field)),
    outputFields.length > 0 ? h('h4', null, 'Outputs of completed tasks (later tasks run again)') : null,
    outputFields.map(({ task, field }) =>
      h('details', null, h('summary', null, `${task.number}. ${task.name ?? task.description}`), field),
    ),
    plan,
    h('button', { type: 'submit', class: 'primary' }, 'Run'),
    message,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const inputs = changedInputs();
    const outputs = changedOutputs();
    if (!planShown) {
      message.textContent = 'making the plan…';
      await planning;
      message.textContent = 'the plan is shown above now: read it, then press Run again';
      return;
    }
    message.textContent = 'starting…';
    try {
      await onRun({
        checkpoint: detail.metadata.id,
        mode: mode.value,
        ...(mode.value === 'fork' && branch.value.trim() !== '' ? { branch: branch.value.trim() } : {}),
        ...(inputs.length > 0 ? { inputs } : {}),
        ...(outputs.length > 0 ? { outputs } : {}),
        ...(answer && answer.value !== '' ? { answer: answer.value } : {}),
        ...(mode.value === 'resume' && plannedHead !== undefined ? { head: plannedHead } : {}),
      });
      message.textContent = 'started: see Runs';
    } catch (error) {
      message.textContent = error.message;
    }
  });
  return form;
}

/** The detail panel's contents. */
export function detailView(detail, { readOnly, onCompare, onRun, onPlan, loadEvent }) {
  const m = detail.metadata;
  // Worked out by the server as info does: a flow's crews get their inputs from the flow.
  const missing = detail.missingPlaceholders;
  return h(
    'div',
    { class: 'detail', 'data-checkpoint': m.id },
    h('h2', null, 'Checkpoint ', h('code', null, m.id)),
    h(
      'button',
      { type: 'button', class: 'compare-button', onclick: () => onCompare(m.id) },
      'Add to comparison',
    ),
    h(
      'table',
      { class: 'summary' },
      row('Time', formatTime(m.createdAt)),
      row('Branch', m.branch),
      row('Trigger', m.trigger),
      row('Parent', m.parentId ?? '(none: first checkpoint of its run)'),
      row('Run', m.lineageId),
      row('Events', String(m.eventCount)),
      row('Size', m.sizeBytes === undefined ? '(unknown)' : `${m.sizeBytes} bytes`),
      row('Tokens', tokens(detail.usage)),
      row('Cost', [
        h('span', { class: `cost cost-${detail.cost.status}` }, detail.cost.note),
        detail.cost.modelLines.map((line) => h('div', { class: 'muted' }, line)),
      ]),
      // A fork's history carries the calls of the checkpoint it was forked from: apart, not its own.
      detail.cost.inherited
        ? row('Inherited', [
            h(
              'span',
              { class: `cost cost-${detail.cost.inherited.status}` },
              `${detail.cost.inherited.note}: the calls of the checkpoint this branch was forked from (${detail.cost.inherited.forkedFrom}), not counted above`,
            ),
            detail.cost.inherited.modelLines.map((line) => h('div', { class: 'muted' }, line)),
          ])
        : null,
      row(
        'Format',
        `${detail.format.name} v${detail.format.version}, crewline ${detail.format.libraryVersion}`,
      ),
    ),
    h('h3', null, 'Inputs'),
    Object.keys(detail.inputs).length === 0
      ? h('p', { class: 'muted' }, '(none)')
      : h(
          'table',
          { class: 'inputs' },
          Object.entries(detail.inputs).map(([key, value]) => row(key, h('pre', null, valueText(value)))),
        ),
    missing.length > 0
      ? h(
          'p',
          { class: 'muted' },
          `placeholders without a value: ${missing.map((name) => `{${name}}`).join(', ')}`,
        )
      : null,
    detail.entities.map(entityView),
    readOnly
      ? h(
          'p',
          { class: 'muted read-only' },
          'Read-only: start with --allow-resume to edit, resume and fork here.',
        )
      : runForm(detail, onRun, onPlan),
    timelineView(detail, loadEvent),
  );
}
