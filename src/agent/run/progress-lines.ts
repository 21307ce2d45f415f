import type { BudgetUsage } from '../search/state/budget.js';
import type { SearchEvent } from '../search/state/search-events.js';

function logfmtValue(value: string | number | boolean | null): string {
  if (value === null) return 'null';
  const text = typeof value === 'number' ? String(Number(value.toFixed(6))) : String(value);
  return /^[\w.:/+-]+$/.test(text) ? text : JSON.stringify(text);
}

function usageFields(usage: BudgetUsage): Record<string, number | null> {
  return { candidates: usage.candidates, best_speedup: usage.bestSpeedup, tokens: usage.tokens, cost_usd: usage.costUsd, device_s: usage.deviceMs / 1000 };
}

function eventFields(event: SearchEvent): Record<string, string | number | boolean | null> {
  switch (event.type) {
    case 'run-started':
      return { run: event.runId, problems: event.problemCount, resumed: event.resumed };
    case 'run-finished':
      return { run: event.runId, status: event.status };
    case 'problem-started':
      return { index: event.index + 1, of: event.total, strategy: event.strategy };
    case 'model-called':
      return {};
    case 'candidate-submitted':
      return { candidate: event.candidateId, candidate_number: event.candidateNumber };
    case 'candidate-stage':
      return {
        candidate: event.candidateId,
        candidate_number: event.candidateNumber,
        stage: event.progress.stage,
        role: event.progress.role,
        status: event.progress.kind === 'stage-started' ? 'started' : 'finished',
      };
    case 'model-replied':
      return { reply_tokens: event.tokens, latency_ms: event.latencyMs };
    case 'model-call-failed':
    case 'model-exhausted':
      return { message: event.message };
    case 'reply-without-code':
      return { reason: event.reason };
    case 'candidate-evaluated':
      return { candidate: event.candidateId, candidate_number: event.candidateNumber, verdict: event.verdict, speedup: event.speedup, reused: event.reused };
    case 'best-improved':
      return { candidate: event.candidateId, speedup: event.speedup, median_ms: event.medianMs };
    case 'problem-stalled':
      return { without_improvement: event.candidatesWithoutImprovement, policy: event.policy };
    case 'strategy-switched':
      return { from: event.from, to: event.to };
    case 'problem-finished':
      return { reason: event.reason };
    case 'intervention-failed':
      return { run: event.runId, message: event.message };
  }
}

/**
 * One `key=value` line per event (logfmt), for logs and pipes: stable keys, values quoted only
 * where they hold spaces, so `grep` and log tools read it as easily as a person.
 *
 * @example event=candidate-evaluated problem=01_relu candidate=41 candidate_number=3 verdict=correct speedup=1.25 candidates=3 tokens=812 cost_usd=0 device_s=1.2
 */
export function progressLine(event: SearchEvent): string {
  const fields: Record<string, string | number | boolean | null> = { event: event.type };
  if ('problem' in event) fields.problem = event.problem;
  Object.assign(fields, eventFields(event));
  if ('usage' in event) Object.assign(fields, usageFields(event.usage));
  return Object.entries(fields)
    .map(([key, value]) => `${key}=${logfmtValue(value)}`)
    .join(' ');
}
