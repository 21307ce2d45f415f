import type { EvaluationSettings } from '../run/evaluation-settings.js';
import type { EvaluationProgress } from '../evaluator.js';
import type { MessageOfType } from '../process/protocol.js';
import type { WarmWorker } from './warm-worker-pool.js';

/**
 * Hands a warm worker to one evaluation: its stage limits, idle limit, cancel signal and stage
 * progress (as {@link EvaluationProgress} of the worker's role) from now on.
 */
export function adoptWarmWorker(
  warm: WarmWorker,
  settings: EvaluationSettings,
  options: { signal?: AbortSignal | undefined; terminationGraceMs?: number | undefined; onProgress: (event: EvaluationProgress) => void },
): void {
  const role = warm.role;
  warm.worker.adopt({
    stageLimitsMs: settings.stageLimitsMs,
    idleLimitMs: settings.idleLimitMs,
    terminationGraceMs: options.terminationGraceMs,
    cancelSignal: options.signal,
    onStage: (message) =>
      options.onProgress(
        message.status === 'start'
          ? { kind: 'stage-started', role, stage: message.stage }
          : { kind: 'stage-finished', role, stage: message.stage, durationMs: message.duration_ms ?? 0 },
      ),
  });
}

/** The worker's hello, or null when it ended without one or did not say it within `limitMs`. */
export function helloWithin(warm: WarmWorker, limitMs: number): Promise<MessageOfType<'hello'> | null> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), limitMs)));
  return Promise.race([warm.worker.hello, expired]).finally(() => clearTimeout(timer));
}
