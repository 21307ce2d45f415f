/** Latency figures of one phase of the reward load test. Times in ms. */
export interface LatencySummary {
  requests: number;
  /** Answers by HTTP status (`"200"`, `"429"`, …), final attempts only. */
  statuses: Record<string, number>;
  /** 429 answers that were retried after their Retry-After. */
  retriedBusy: number;
  p50Ms: number | null;
  p90Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  meanMs: number | null;
  wallMs: number;
  /** Requests answered per second of the phase's wall time. */
  throughputPerSecond: number;
}

/** The nearest-rank percentile (`p` in 0–100) of ascending `sorted`; null when empty. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** Sums up one phase: latencies of every request (first attempt to final answer), its statuses and wall time. */
export function summarizeLatencies(latenciesMs: readonly number[], statuses: readonly number[], retriedBusy: number, wallMs: number): LatencySummary {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const counts: Record<string, number> = {};
  for (const status of statuses) counts[String(status)] = (counts[String(status)] ?? 0) + 1;
  return {
    requests: latenciesMs.length,
    statuses: counts,
    retriedBusy,
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.at(-1) ?? null,
    meanMs: sorted.length === 0 ? null : sorted.reduce((sum, value) => sum + value, 0) / sorted.length,
    wallMs,
    throughputPerSecond: wallMs > 0 ? (latenciesMs.length / wallMs) * 1000 : 0,
  };
}
