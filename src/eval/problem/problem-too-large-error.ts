import type { SizeEstimate } from './size-estimate.js';
import { formatBytes } from '../pipeline/memory-budget.js';

/**
 * The problem cannot be evaluated on this machine at the sizes asked for: its estimated peak
 * memory (docs/sizes.md) exceeds what the device (on cpu, the host) has. The message names the
 * estimate, the capacity and the `--set` values that would fit; nothing ran on the device.
 */
export class ProblemTooLargeError extends Error {
  override readonly name = 'ProblemTooLargeError';
  readonly estimate: SizeEstimate;
  readonly capacityBytes: number;
  /** The overrides that would fit, when the estimate found some. */
  readonly fitOverrides: Readonly<Record<string, number | boolean>> | null;

  constructor(problemPath: string, device: string, estimate: SizeEstimate, capacityBytes: number) {
    const fit = estimate.fit;
    const set = fit
      ? Object.entries(fit.overrides)
          .map(([name, value]) => `--set ${name}=${String(value)}`)
          .join(' ')
      : null;
    super(
      `${problemPath} needs about ${formatBytes(estimate.evaluation_bytes)} to evaluate at ${estimate.problem_overrides ? 'these' : 'its own'} sizes ` +
        `(inputs ${formatBytes(estimate.input_bytes)} a set, output ${formatBytes(estimate.output_bytes)}), more than the ${formatBytes(capacityBytes)} of ${device}; ` +
        (set
          ? `evaluate it at sizes that fit with ${set} (about ${formatBytes(fit!.evaluation_bytes)}), or --fit to do so`
          : 'evaluate it at smaller sizes with --set NAME=VALUE') +
        '; figures at other sizes are recorded as `problem_overrides`',
    );
    this.estimate = estimate;
    this.capacityBytes = capacityBytes;
    this.fitOverrides = fit?.overrides ?? null;
  }
}
