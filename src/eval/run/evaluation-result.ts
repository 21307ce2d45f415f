import type { BuildInfo } from '../../core/build-info.js';
import type { GuardReport } from '../../core/guard-report.js';
import type { Attribution, CorrectnessSummary, EvaluationMemory, EvaluationResult, StageLimits, TimingSummary } from '../../core/verdict.js';
import type { EvaluationSettings } from './evaluation-settings.js';
import type { Outcome } from './outcome.js';
import type { WorkerEnvironment, MessageOfType } from '../process/protocol.js';
import type { WorkerProcessResult } from '../process/worker-process-types.js';

export interface ResultParts {
  settings: EvaluationSettings;
  outcome: Outcome;
  /** The process whose stdout and stderr the diagnostics keep: the one the outcome is about. */
  output: Pick<WorkerProcessResult, 'stdout' | 'stderr' | 'droppedBytes'> | null;
  /** Stage wall times of both workers, in milliseconds. */
  stageDurationsMs: Record<string, number>;
  /** Each stage's limit and how it was chosen. */
  stageLimits?: StageLimits | undefined;
  environment: WorkerEnvironment | null;
  correctness?: CorrectnessSummary | undefined;
  timing?: TimingSummary | undefined;
  buildInfo?: MessageOfType<'build-info'> | undefined;
  guard?: GuardReport | null;
  /** Where the traced call's time went; kept on `correct` and `rejected` verdicts only. */
  attribution?: Attribution | undefined;
  /** Each worker's memory peaks. */
  memory?: EvaluationMemory | undefined;
}

/**
 * The JSON result of docs/spec.md section 6 from the parts an evaluation gathered: `timing` only
 * when correct, `attribution` only when correct or rejected, and a correct verdict's diagnostics
 * are its output alone (`evaluationResultSchema`, src/core/verdict.ts).
 */
export function assembleResult(parts: ResultParts): EvaluationResult {
  const { settings, outcome, output } = parts;
  const stdout = withDropNote(output?.stdout ?? '', output?.droppedBytes.stdout ?? 0);
  const stderr = withDropNote(output?.stderr ?? '', output?.droppedBytes.stderr ?? 0);
  // Field order is the printed JSON's: verdict, reasons, what was evaluated, diagnostics, stages, environment, then the rest.
  const head = {
    reasons: outcome.reasons,
    problem: settings.problemPath,
    candidate: settings.candidatePath,
    backend: settings.backend,
    precision: settings.precision,
    preset: settings.preset,
    diagnostics: { ...outcome.diagnostics, stdout, stderr },
    stages: parts.stageDurationsMs,
    ...(parts.stageLimits ? { stage_limits: parts.stageLimits } : {}),
    environment: parts.environment,
    ...(parts.memory ? { memory: parts.memory } : {}),
    ...(Object.keys(settings.overrides ?? {}).length > 0 ? { problem_overrides: { ...settings.overrides } } : {}),
    ...(parts.correctness ? { correctness: parts.correctness } : {}),
  };
  const guard = parts.guard ? { guard: parts.guard } : {};
  const attribution = parts.attribution ? { attribution: parts.attribution } : {};
  const build = parts.buildInfo ? { build: buildOf(parts.buildInfo) } : {};
  switch (outcome.verdict) {
    case 'correct': {
      // A correct verdict comes from a judgement, never from a failure: its diagnostics are its output.
      if (!parts.correctness) throw new Error('a correct verdict without judged correctness trials');
      return {
        verdict: outcome.verdict,
        ...head,
        correctness: parts.correctness,
        diagnostics: { stdout, stderr },
        ...(parts.timing ? { timing: parts.timing } : {}),
        ...guard,
        ...attribution,
        ...build,
      };
    }
    case 'rejected':
      return { verdict: outcome.verdict, ...head, ...guard, ...attribution, ...build };
    default:
      return { verdict: outcome.verdict, ...head, ...guard, ...build };
  }
}

/** The result's `build`: the `build-info` message without its protocol fields. */
function buildOf(message: MessageOfType<'build-info'>): BuildInfo {
  const { v: _version, type: _type, ...build } = message;
  return build;
}

function withDropNote(text: string, droppedBytes: number): string {
  return droppedBytes > 0 ? `${text}\n[kforge: ${droppedBytes} more bytes were dropped past the 1 MiB limit]\n` : text;
}
