// Process signals, emitted into each active run so it can checkpoint before the process ends.
import { defineEvent } from '../base-event.js';

export interface SignalPayload {
  signal: string;
  signalNumber?: number;
  reason?: string;
}

export class SigTermEvent extends defineEvent<'SIGTERM', SignalPayload>('SIGTERM') {}
export class SigIntEvent extends defineEvent<'SIGINT', SignalPayload>('SIGINT') {}
export class SigHupEvent extends defineEvent<'SIGHUP', SignalPayload>('SIGHUP') {}
export class SigTstpEvent extends defineEvent<'SIGTSTP', SignalPayload>('SIGTSTP') {}
export class SigContEvent extends defineEvent<'SIGCONT', SignalPayload>('SIGCONT') {}
