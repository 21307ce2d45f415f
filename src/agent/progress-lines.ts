import type { BudgetUsage } from './budget.js';
import { formatCount, formatSpeedup, formatUsd } from './number-format.js';
import type { SearchEvent } from './search-events.js';

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
    case 'model-replied':
      return { reply_tokens: event.tokens, latency_ms: event.latencyMs };
    case 'model-call-failed':
      return { message: event.message };
    case 'reply-without-code':
      return { reason: event.reason };
    case 'candidate-evaluated':
      return { candidate: event.candidateId, verdict: event.verdict, speedup: event.speedup, reused: event.reused };
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
 * @example event=candidate-evaluated problem=01_relu candidate=3 verdict=correct speedup=1.25 candidates=3 tokens=812 cost_usd=0 device_s=1.2
 */
export function progressLine(event: SearchEvent): string {
  const fields: Record<string, string | number | boolean | null> = { event: event.type };
  if ('problem' in event) fields['problem'] = event.problem;
  Object.assign(fields, eventFields(event));
  if ('usage' in event) Object.assign(fields, usageFields(event.usage));
  return Object.entries(fields)
    .map(([key, value]) => `${key}=${logfmtValue(value)}`)
    .join(' ');
}

interface ProblemLine {
  name: string;
  state: string;
  usage: BudgetUsage | null;
  last: string;
}

/**
 * The state behind a terminal's live view: one line per problem (candidates tried, best speedup so
 * far, tokens and cost so far, what it is doing), updated from events. Rendering is the caller's.
 */
export class LiveProgress {
  private readonly problems = new Map<string, ProblemLine>();
  private header = 'starting';

  update(event: SearchEvent): void {
    if (event.type === 'run-started') {
      this.header = `run ${event.runId}${event.resumed ? ' (resumed)' : ''}: ${event.problemCount} problem${event.problemCount === 1 ? '' : 's'}`;
      return;
    }
    if (event.type === 'run-finished') {
      this.header = this.header.replace(/ — .*$/, '') + ` — ${event.status}`;
      return;
    }
    if (event.type === 'intervention-failed') {
      this.header = this.header.replace(/ — .*$/, '') + ` — an action could not be applied: ${event.message}`;
      return;
    }
    const line = this.problems.get(event.problemHash) ?? { name: event.problem, state: 'waiting', usage: null, last: '' };
    line.usage = event.usage;
    if (event.type === 'problem-started') line.state = event.strategy;
    if (event.type === 'problem-finished') line.state = `done (${event.reason})`;
    if (event.type === 'strategy-switched') line.state = event.to;
    if (event.type === 'candidate-evaluated') line.last = `#${event.candidateId} ${event.verdict}${event.speedup === null ? '' : ` ${formatSpeedup(event.speedup)}`}`;
    if (event.type === 'reply-without-code') line.last = 'reply without code';
    if (event.type === 'model-call-failed') line.last = 'model call failed';
    if (event.type === 'problem-stalled') line.last = `stalled (${event.policy})`;
    this.problems.set(event.problemHash, line);
  }

  /** The view's lines: a header, then one per problem that has started. */
  lines(): string[] {
    const width = Math.max(8, ...[...this.problems.values()].map((line) => line.name.length));
    const rows = [...this.problems.values()].map((line) => {
      const usage = line.usage;
      const figures = usage
        ? `${String(usage.candidates).padStart(3)} cand  best ${formatSpeedup(usage.bestSpeedup).padStart(6)}  ${formatCount(usage.tokens).padStart(8)} tok  ${formatUsd(usage.costUsd).padStart(7)}`
        : '';
      return `  ${line.name.padEnd(width)}  ${line.state.padEnd(14)}  ${figures}  ${line.last}`.trimEnd();
    });
    return [this.header, ...rows];
  }
}
