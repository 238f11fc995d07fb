import type { EventBus } from '@crewline/events';
import { FlowInputReceivedEvent, HumanFeedbackReceivedEvent } from '@crewline/events';
import { flowError } from './errors.js';
import { FlowPauseSignal, methodScope } from './method-scope.js';
import type { Activation } from './run-progress.js';

/**
 * `flow.ask()`: the answer given for this question when there is one (its "received" event emitted
 * the first time it is handed out), else a pause of the running method. Answers are matched to
 * questions by their order within one execution of the method.
 */
export async function askPerson(
  flow: { readonly flowName: string; readonly bus: EventBus },
  message: string,
  kind: 'feedback' | 'input',
  header: (
    activation: Activation,
  ) => Pick<ConstructorParameters<typeof HumanFeedbackReceivedEvent>[0], 'source' | 'context'>,
): Promise<string> {
  const scope = methodScope.getStore();
  if (!scope || scope.flow !== flow) {
    throw flowError(
      'invalid_state',
      `flow "${flow.flowName}": ask() works only inside one of this flow's methods while it runs`,
    );
  }
  const activation = scope.activation;
  const index = scope.asked;
  scope.asked += 1;
  const answer = activation.answers[index];
  if (answer !== undefined) {
    if (index >= activation.answersDelivered) {
      activation.answersDelivered = index + 1;
      const base = { flowName: flow.flowName, methodName: activation.method, ...header(activation) };
      flow.bus.emit(
        flow,
        kind === 'input'
          ? new FlowInputReceivedEvent({ ...base, value: answer })
          : new HumanFeedbackReceivedEvent({ ...base, feedback: answer }),
      );
    }
    return answer;
  }
  const request = { message, kind };
  scope.pauseRequested = request;
  throw new FlowPauseSignal(request);
}

/** One line telling a person how to continue a paused flow (`FlowPauseInfo.hint`). */
export function resumeHint(
  flowName: string,
  stateId: string,
  reference: string | undefined,
  persisted: boolean,
): string {
  if (persisted) return `continue with ${flowName}.resume({ id: '${stateId}' }, answer)`;
  if (reference) return `continue with ${flowName}.resume('${reference}', answer)`;
  return 'continue in this process with flow.resume(answer); enable checkpoint or @persist() to continue from another process';
}
