import { useCallback, useEffect, useRef, useState } from 'react';
import { api } from './api';
import { initialAnswer } from './initial-data';

export interface ApiState<T> {
  data: T | undefined;
  error: Error | undefined;
  /** True only before the first answer; reloads keep showing the old data. */
  loading: boolean;
  reload: () => void;
}

/**
 * GETs `url` (null: nothing yet) and again on `reload`; stale answers to an older URL are dropped.
 * An answer the page came with (initial-data.ts) is the first one, without a request.
 */
export function useApi<T>(url: string | null): ApiState<T> {
  const [initial] = useState(() => (url === null ? undefined : initialAnswer<T>(url)));
  const [data, setData] = useState<T | undefined>(initial);
  const [error, setError] = useState<Error>();
  const [loading, setLoading] = useState(url !== null && initial === undefined);
  const [generation, setGeneration] = useState(0);
  const current = useRef(url);
  current.current = url;
  const shown = useRef<string | null>(initial === undefined ? null : url);
  /** The URL whose first fetch the page's own answer stands for, until that fetch would have happened. */
  const given = useRef<string | null>(initial === undefined ? null : url);

  // biome-ignore lint/correctness/useExhaustiveDependencies: generation is the trigger: reload() bumps it to fetch the same URL again.
  useEffect(() => {
    if (url === null) return;
    if (given.current === url) {
      given.current = null;
      return;
    }
    if (shown.current !== url) {
      setLoading(true);
      setData(undefined);
      setError(undefined);
    }
    let cancelled = false;
    api
      .get<T>(url)
      .then((answer) => {
        if (cancelled || current.current !== url) return;
        shown.current = url;
        setData(answer);
        setError(undefined);
      })
      .catch((failure: unknown) => {
        if (!cancelled && current.current === url) setError(failure instanceof Error ? failure : new Error(String(failure)));
      })
      .finally(() => {
        if (!cancelled && current.current === url) setLoading(false);
      });
    return () => {
      cancelled = true;
    };
  }, [url, generation]);

  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  return { data, error, loading, reload };
}
