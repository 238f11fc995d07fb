/** @jsxRuntime automatic */
/** @jsxImportSource react */
// The pragmas keep the automatic JSX runtime when tsx runs this file outside our tsconfig (a user project).
import { useApp, useInput, useStdout } from 'ink';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { BrowserHost } from '../browser-host.js';
import { errorText } from '../error-text.js';
import { toKeyPress } from '../key-adapter.js';
import type { Action, BrowserState, Effect } from '../state/browser-state.js';
import { renderScreen } from '../state/screen.js';
import { update } from '../state/update.js';
import { ScreenView, type Styling } from './screen-view.js';

export interface BrowserAppProps {
  initial: BrowserState;
  host: BrowserHost;
  styling: Styling;
  /** Called once when the user quits. */
  onExit?: () => void;
}

/** The checkpoint browser: the pure state machine, its effects carried out by `host`, drawn with Ink. */
export function BrowserApp({ initial, host, styling, onExit }: BrowserAppProps) {
  const { exit } = useApp();
  const { stdout } = useStdout();
  const stateRef = useRef(initial);
  const [state, setState] = useState(initial);
  const [size, setSize] = useState({ width: stdout.columns || 80, height: stdout.rows || 24 });

  const dispatchRef = useRef<(action: Action) => void>(() => undefined);
  const perform = useCallback(
    (effect: Effect) => {
      const dispatch = (action: Action) => dispatchRef.current(action);
      switch (effect.type) {
        case 'load-list':
          host.list().then(
            (checkpoints) => dispatch({ type: 'list-loaded', checkpoints }),
            (error: unknown) => dispatch({ type: 'list-failed', error: errorText(error) }),
          );
          return;
        case 'load-detail':
          host.readView(effect.checkpointId).then(
            (view) => dispatch({ type: 'detail-loaded', checkpointId: effect.checkpointId, view }),
            (error: unknown) =>
              dispatch({ type: 'detail-failed', checkpointId: effect.checkpointId, error: errorText(error) }),
          );
          return;
        case 'load-plan':
          host.planResume(effect.checkpointId).then(
            (plan) => dispatch({ type: 'plan-loaded', checkpointId: effect.checkpointId, plan }),
            (error: unknown) =>
              dispatch({ type: 'plan-failed', checkpointId: effect.checkpointId, error: errorText(error) }),
          );
          return;
        case 'start-run':
          host
            .run(effect.request, (line) => dispatch({ type: 'run-progress', line }))
            .then(
              (result) => dispatch({ type: 'run-finished', result }),
              (error: unknown) => dispatch({ type: 'run-failed', error: errorText(error) }),
            );
          return;
        case 'interrupt-run':
          host.interrupt();
          return;
        case 'exit':
          onExit?.();
          exit();
          return;
      }
    },
    [host, exit, onExit],
  );

  dispatchRef.current = (action: Action) => {
    const result = update(stateRef.current, action);
    stateRef.current = result.state;
    setState(result.state);
    for (const effect of result.effects) perform(effect);
  };

  useEffect(() => {
    perform({ type: 'load-list' });
  }, [perform]);

  useEffect(() => {
    // The state knows the size too: how far the confirmation scrolls depends on it.
    const onResize = () => {
      const resized = { width: stdout.columns || 80, height: stdout.rows || 24 };
      setSize(resized);
      dispatchRef.current({ type: 'resize', ...resized });
    };
    onResize();
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);

  useInput((input, key) => dispatchRef.current({ type: 'key', key: toKeyPress(input, key) }));

  return <ScreenView lines={renderScreen(state, size)} styling={styling} />;
}
