import type { Attribution, CorrectnessSummary, EvaluationMemory, EvaluationResult, TimingSummary } from '../core/verdict.js';
import type { EvaluationSettings } from './evaluation-settings.js';
import type { GuardReport } from './guard-outcome.js';
import type { Outcome } from './outcome.js';
import type { BuildInfoMessage, WorkerEnvironment } from './protocol.js';
import type { WorkerProcessResult } from './worker-process-types.js';

export interface ResultParts {
  settings: EvaluationSettings;
  outcome: Outcome;
  /** The process whose stdout and stderr the diagnostics keep: the one the outcome is about. */
  output: Pick<WorkerProcessResult, 'stdout' | 'stderr' | 'droppedBytes'> | null;
  /** Stage wall times of both workers, in milliseconds. */
  stageDurationsMs: Record<string, number>;
  environment: WorkerEnvironment | null;
  correctness?: CorrectnessSummary | undefined;
  timing?: TimingSummary | undefined;
  buildInfo?: BuildInfoMessage | undefined;
  guard?: GuardReport | null;
  /** Where the traced call's time went; kept on `correct` and `rejected` verdicts only. */
  attribution?: Attribution | undefined;
  /** Each worker's memory peaks. */
  memory?: EvaluationMemory | undefined;
}

/** The JSON result of docs/spec.md section 6 from the parts an evaluation gathered; `timing` only when correct. */
export function assembleResult(parts: ResultParts): EvaluationResult {
  const { settings, outcome, output } = parts;
  const result: EvaluationResult = {
    verdict: outcome.verdict,
    reasons: outcome.reasons,
    problem: settings.problemPath,
    candidate: settings.candidatePath,
    backend: settings.backend,
    precision: settings.precision,
    preset: settings.preset,
    diagnostics: {
      ...outcome.diagnostics,
      stdout: withDropNote(output?.stdout ?? '', output?.droppedBytes.stdout ?? 0),
      stderr: withDropNote(output?.stderr ?? '', output?.droppedBytes.stderr ?? 0),
    },
    stages: parts.stageDurationsMs,
    environment: parts.environment,
  };
  if (parts.memory) result.memory = parts.memory;
  if (Object.keys(settings.overrides ?? {}).length > 0) result.problem_overrides = { ...settings.overrides };
  if (parts.correctness) result.correctness = parts.correctness;
  if (parts.timing && outcome.verdict === 'correct') result.timing = parts.timing;
  if (parts.guard) result.guard = parts.guard as unknown as Record<string, unknown>;
  if (parts.attribution && (outcome.verdict === 'correct' || outcome.verdict === 'rejected')) result.attribution = parts.attribution;
  if (parts.buildInfo) {
    const { v: _version, type: _type, ...build } = parts.buildInfo;
    result.build = build;
  }
  return result;
}

function withDropNote(text: string, droppedBytes: number): string {
  return droppedBytes > 0 ? `${text}\n[kforge: ${droppedBytes} more bytes were dropped past the 1 MiB limit]\n` : text;
}
