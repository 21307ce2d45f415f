import type { TimingSummary } from '../../core/verdict.js';
import { warmupCallLimit } from '../../eval/timing/timing-budget.js';
import { EXPOSED_SHARE } from '../../eval/timing/timing-summary.js';
import { formatMilliseconds } from './format.js';

interface Styles {
  dim: (text: string) => string;
  yellow?: (text: string) => string;
}

function percent(value: number): string {
  return `${(value * 100).toFixed(1)}%`;
}

/**
 * A warm-up by time the budget cut short (a tenth of it was spent first), or null: the card's
 * clocks may not have settled when the timed calls began. Ended by the call limit, the calls were
 * short ones, which do not move the clocks much.
 */
function shortWarmup(budget: TimingSummary['budget']): string | null {
  if (!budget?.requested_warmup_ms || budget.warmup_ms === undefined) return null;
  if (budget.warmup_ms >= budget.requested_warmup_ms || budget.warmup_calls >= warmupCallLimit(budget.requested_warmup, budget.requested_warmup_ms))
    return null;
  return `warm-up: ${budget.warmup_calls} calls in ${formatMilliseconds(budget.warmup_ms)} ms, short of the ${formatMilliseconds(budget.requested_warmup_ms)} ms asked for (a tenth of the timing budget): the clocks may not have settled`;
}

/** How a note is styled: dim for what informs, warn for what a reader should act on. */
interface NoteStyles {
  dim: (text: string) => string;
  warn: (text: string) => string;
}

/** One kind of note: its lines for this timing, none when it does not apply. */
type TimingNote = (timing: TimingSummary, styles: NoteStyles) => string[];

const hostInclusiveNote: TimingNote = (timing, { dim }) => {
  const walls = [
    ['candidate', timing.candidate_wall_ms],
    ['eager', timing.eager_wall_ms],
    ['torch.compile', timing.compile_wall_ms],
  ].filter((entry): entry is [string, NonNullable<TimingSummary['candidate_wall_ms']>] => entry[1] !== undefined);
  if (walls.length === 0 || timing.clock === 'host') return [];
  return [dim(`host-inclusive per call: ${walls.map(([name, stats]) => `${name} ${formatMilliseconds(stats.median)} ms`).join(', ')}`)];
};

const launchBoundNote: TimingNote = (timing, { warn }) => {
  const bound = timing.launch_bound;
  if (!bound || !(bound.candidate || bound.eager || bound.compile)) return [];
  const which = [bound.candidate && 'the candidate', bound.eager && 'eager', bound.compile && 'torch.compile'].filter(Boolean).join(', ');
  return [
    warn(
      `launch-bound (${which}): the host takes well longer per call than the device; device time flatters every candidate alike here, and a user pays the host-inclusive time`,
    ),
  ];
};

const exposedLaunchNote: TimingNote = (timing, { warn }) => {
  const exposed = Object.entries(timing.hold ?? {}).filter(
    ([, figure]) => figure !== null && figure.calls > 0 && figure.exposed_calls / figure.calls > EXPOSED_SHARE,
  );
  if (exposed.length === 0) return [];
  const which = exposed.map(([name, figure]) => `${name === 'compile' ? 'torch.compile' : name} ${figure?.exposed_calls} of ${figure?.calls}`).join(', ');
  return [
    warn(
      `the host was still launching when the device ran out of work ahead of the call (${which} timed calls): those device times may include launch latency`,
    ),
  ];
};

const trustedBoundNotes: TimingNote = (timing, { dim, warn }) => {
  const trusted = timing.trusted;
  const lines: string[] = [];
  if (trusted?.source === 'trusted-batch') {
    lines.push(
      warn(
        `the candidate's own clock read ${formatMilliseconds(timing.in_process_ms?.median ?? 0)} ms, below the parent's bound of ${formatMilliseconds(trusted.bound_ms)} ms: the figure is the parent's, ${formatMilliseconds(trusted.trusted_ms)} ms per call over ${trusted.calls} back-to-back calls`,
      ),
    );
  }
  if (trusted?.loose) {
    lines.push(dim(`the trusted bound is loose here: the channel's round trip (${formatMilliseconds(trusted.overhead_ms)} ms) is large against a batch`));
  }
  return lines;
};

const budgetNotes: TimingNote = (timing, { warn }) => {
  const warmup = shortWarmup(timing.budget);
  return [...(timing.budget?.reason ? [warn(`budget: ${timing.budget.reason}`)] : []), ...(warmup ? [warn(warmup)] : [])];
};

const crossCheckNotes: TimingNote = (timing, { dim, warn }) => {
  const check = timing.cross_check;
  if (!check) return [];
  const ratio = check.ratio === null ? '—' : check.ratio.toFixed(3);
  const lines = [
    check.agrees
      ? dim(`cross-check (${check.method}): ${formatMilliseconds(check.median_ms)} ms, ratio ${ratio}, within ${percent(check.bound)}`)
      : warn(`cross-check (${check.method}): ${formatMilliseconds(check.median_ms)} ms, ratio ${ratio}: ${check.finding ?? 'the methods disagree'}`),
  ];
  const kernels = check.kernels;
  if (kernels?.unavailable) lines.push(dim(`cross-check (${kernels.method}): not measured: ${kernels.unavailable}`));
  else if (kernels?.median_ms !== undefined) {
    const kernelRatio = kernels.ratio == null ? '—' : kernels.ratio.toFixed(3);
    const said = `cross-check (${kernels.method}): ${formatMilliseconds(kernels.median_ms)} ms, ratio ${kernelRatio}`;
    lines.push(kernels.agrees ? dim(`${said}, within ${percent(check.bound)}`) : warn(`${said}: ${kernels.finding ?? 'the methods disagree'}`));
  }
  return lines;
};

const anchorNotes: TimingNote = (timing, { warn }) => {
  const anchor = timing.baseline_anchor;
  const lines: string[] = [];
  if (anchor?.used === 'anchor') {
    lines.push(
      warn(
        `baselines re-anchored: eager re-timed beside the candidate moved ${percent(anchor.drift)} from its earlier figure; speedups use the re-timing${anchor.compile_unconfirmed ? ", and torch.compile's earlier figure is unconfirmed" : ''}`,
      ),
    );
  }
  if (anchor?.too_busy) lines.push(warn(`the machine was too busy for these figures to hold: ${anchor.reasons.join('; ')}`));
  return lines;
};

/** The notes in the order they are printed; a new note is one more entry. */
const TIMING_NOTES: readonly TimingNote[] = [
  hostInclusiveNote,
  launchBoundNote,
  exposedLaunchNote,
  trustedBoundNotes,
  budgetNotes,
  crossCheckNotes,
  anchorNotes,
];

/**
 * The lines under `kforge eval`'s timing table (docs/timing.md): host-inclusive times, a
 * launch-bound problem, the trusted bound when it set the figure, the time budget, the
 * cross-check and the baselines' re-anchoring, and a machine too busy for the figures to hold.
 */
export function timingNotes(timing: TimingSummary, styles: Styles): string[] {
  const noteStyles = { dim: styles.dim, warn: styles.yellow ?? ((text: string) => text) };
  return TIMING_NOTES.flatMap((note) => note(timing, noteStyles)).map((line) => `  ${line}`);
}
