// Test doubles are product: users test their own crews with the same offline model we use.

export { OFFLINE_MARKER } from '../models/offline/offline-answer.js';
export {
  isOfflineModel,
  OFFLINE_PROVIDER,
  type OfflineModel,
  type OfflineModelCall,
  type OfflineModelOptions,
  type OfflineScriptStep,
  type OfflineToolCall,
  type OfflineUsageOverride,
  offlineModel,
} from '../models/offline/offline-model.js';
export {
  type CallMatcher,
  type CallRecorder,
  countCalls,
  findCalls,
  lastCall,
  toolResultsSeen,
} from './call-helpers.js';
export { captureLogs, type LogCapture, type LogMatcher } from './capture-logs.js';
