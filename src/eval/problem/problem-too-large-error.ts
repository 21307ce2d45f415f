import type { SizeEstimate } from './size-estimate.js';
import { formatBytes } from '../../core/number-format.js';
import { evaluationSecondsAt, formatBudgetFlag, formatEvaluationTime, setFlags, timeFitWords } from './evaluation-time.js';

/**
 * The problem cannot be evaluated on this machine at the sizes asked for: its estimated peak
 * memory (docs/sizes.md) exceeds what the device (on cpu, the host) has. The message names the
 * estimate, the capacity and the `--set` values that would fit; where the estimate timed the
 * problem (the cpu backend), also how long an evaluation takes at them and a size that takes about
 * its time budget (`--eval-budget`). Nothing ran on the device.
 */
export class ProblemTooLargeError extends Error {
  override readonly name = 'ProblemTooLargeError';
  readonly estimate: SizeEstimate;
  readonly capacityBytes: number;
  /** The overrides that would fit, when the estimate found some. */
  readonly fitOverrides: Readonly<Record<string, number | boolean>> | null;

  constructor(problemPath: string, device: string, estimate: SizeEstimate, capacityBytes: number) {
    const fit = estimate.fit;
    const set = fit ? setFlags(fit.overrides) : null;
    const fitSeconds = fit ? evaluationSecondsAt(estimate, fit.overrides) : null;
    const fitTime = fitSeconds === null ? '' : `; ${formatEvaluationTime(fitSeconds)} per evaluation on this machine`;
    // A size by time is offered where it differs from the one that fits (memory may be what limits it).
    const timeFit = estimate.time?.fit;
    const sameFit = !!fit && !!timeFit && setFlags(timeFit.overrides) === set;
    const byTime = sameFit ? null : timeFitWords(estimate);
    const budget = estimate.time?.budget_s;
    super(
      `${problemPath} needs about ${formatBytes(estimate.evaluation_bytes)} to evaluate at ${estimate.problem_overrides ? 'these' : 'its own'} sizes ` +
        `(inputs ${formatBytes(estimate.input_bytes)} a set, output ${formatBytes(estimate.output_bytes)}), more than the ${formatBytes(capacityBytes)} of ${device}; ` +
        (set
          ? `evaluate it at sizes that fit with ${set} (about ${formatBytes(fit!.evaluation_bytes)}${fitTime}), or --fit to do so`
          : 'evaluate it at smaller sizes with --set NAME=VALUE') +
        (byTime && budget ? `; ${byTime}, the size --eval-budget ${formatBudgetFlag(budget * 1000)} picks` : '') +
        '; figures at other sizes are recorded as `problem_overrides`',
    );
    this.estimate = estimate;
    this.capacityBytes = capacityBytes;
    this.fitOverrides = fit?.overrides ?? null;
  }
}
