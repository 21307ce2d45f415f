import { useEffect, useRef, useState } from 'react';
import type { RunEventView } from '../../../src/server/api-types';
import { withToken } from './token';

export type StreamState = 'connecting' | 'live' | 'reconnecting';

/**
 * Listens to a server-sent event stream while mounted. `onEvent` gets each event's parsed data;
 * the browser reconnects by itself (resuming from the last id), and the state says whether it is.
 */
export function useEventStream<T = RunEventView>(url: string | null, eventName: string, onEvent: (data: T) => void): StreamState {
  const [state, setState] = useState<StreamState>('connecting');
  const handler = useRef(onEvent);
  handler.current = onEvent;
  useEffect(() => {
    if (url === null) return;
    const source = new EventSource(withToken(url));
    setState('connecting');
    source.onopen = () => setState('live');
    source.onerror = () => setState('reconnecting');
    const listener = (message: MessageEvent<string>): void => handler.current(JSON.parse(message.data) as T);
    source.addEventListener(eventName, listener as EventListener);
    return () => source.close();
  }, [url, eventName]);
  return state;
}

/** Calls `work` at most once per `ms`, trailing: bursts of events cause one reload. */
export function useThrottled(work: () => void, ms = 400): () => void {
  const timer = useRef<number | undefined>(undefined);
  const latest = useRef(work);
  latest.current = work;
  useEffect(() => () => window.clearTimeout(timer.current), []);
  return () => {
    if (timer.current !== undefined) return;
    timer.current = window.setTimeout(() => {
      timer.current = undefined;
      latest.current();
    }, ms);
  };
}
