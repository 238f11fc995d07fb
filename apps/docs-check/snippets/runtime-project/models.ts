// A custom model of the example project that packages/runtime/README.md configures.
import { offlineModel } from '@crewline/runtime/testing';

export const myModel = offlineModel({ name: 'team' });
