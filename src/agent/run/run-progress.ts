import type { BudgetUsage } from '../search/state/budget.js';
import { formatSpeedup } from '../../core/number-format.js';
import type { ProblemEndReason, SearchEvent } from '../search/state/search-events.js';

/** Where one problem of a run stands, for a live view. */
export interface ProblemProgress {
  name: string;
  /** 0-based place in the run. */
  index: number;
  status: 'running' | 'done';
  /**
   * What it is doing now (`building #3`, `asking the model`), or how it ended (`done: target
   * speedup`). Candidates are named by their number within the problem (`candidateNumber`), as
   * the candidate count counts them.
   */
  stage: string;
  /** Usage as of the last event; null before the first. */
  usage: BudgetUsage | null;
  /** Clock time of the last usage, in ms, so a running problem's elapsed time can tick on. */
  usageAtMs: number;
  /** The last outcome: `#3 correct 1.50x`, `#4 crashed`, `reply without code`; a replay running out leaves it as it was. */
  last: string;
}

/** The whole run, for a live view: every problem started so far, in run order. */
export interface RunProgressSnapshot {
  runId: string | null;
  /** Problems in the run (known from `run-started`); 0 before it. */
  total: number;
  resumed: boolean;
  /** `running`, or how the run ended. */
  status: 'running' | 'finished' | 'stopped' | 'paused' | 'failed';
  /** Clock time the run started, in ms. */
  startedAtMs: number;
  problems: ProblemProgress[];
  /** A person's action that could not be applied, the latest one. */
  note: string | null;
}

/** What each evaluation stage is called on a progress row. */
const STAGE_NAMES: Record<string, string> = {
  reference: 'reference',
  baseline: 'baselines',
  build: 'building',
  load: 'loading',
  correctness: 'checking',
  judge: 'judging',
  timing: 'timing',
};

/** How a problem's search ended, in words (budgets named after their flags). */
const END_REASONS: Record<ProblemEndReason, string> = {
  candidates: 'max candidates',
  'wall-clock': 'max minutes',
  tokens: 'max tokens',
  cost: 'max cost',
  'device-seconds': 'max device time',
  'target-speedup': 'target reached',
  'strategy-finished': 'strategy finished',
  paused: 'paused (stalled)',
  stopped: 'stopped',
  'model-unavailable': 'model unavailable',
  'model-exhausted': 'no replies left',
};

/**
 * The state behind `kforge optimize`'s live view, updated from search events: per problem its
 * stage, usage and last outcome; for the run, how many problems there are and how it ended.
 * Rendering is the caller's ({@link RunProgressSnapshot} is plain data).
 */
export class RunProgress {
  private readonly problems = new Map<string, ProblemProgress>();
  private readonly state: Omit<RunProgressSnapshot, 'problems'>;

  constructor(private readonly now: () => number = Date.now) {
    this.state = { runId: null, total: 0, resumed: false, status: 'running', startedAtMs: now(), note: null };
  }

  update(event: SearchEvent): void {
    if (event.type === 'run-started') {
      Object.assign(this.state, { runId: event.runId, total: event.problemCount, resumed: event.resumed });
      return;
    }
    if (event.type === 'run-finished') {
      this.state.status = event.status;
      for (const problem of this.problems.values()) if (problem.status === 'running') problem.stage = event.status;
      return;
    }
    if (event.type === 'intervention-failed') {
      this.state.note = `an action could not be applied: ${event.message}`;
      return;
    }
    const known = this.problems.get(event.problemHash);
    const problem: ProblemProgress = known ?? {
      name: event.problem,
      index: this.problems.size,
      status: 'running',
      stage: 'starting',
      usage: null,
      usageAtMs: 0,
      last: '',
    };
    problem.usage = event.usage;
    problem.usageAtMs = this.now();
    applyProblemEvent(problem, event);
    this.problems.set(event.problemHash, problem);
  }

  snapshot(): RunProgressSnapshot {
    const problems = [...this.problems.values()].sort((a, b) => a.index - b.index).map((problem) => ({ ...problem }));
    return { ...this.state, problems };
  }
}

type ProblemEvent = Exclude<SearchEvent, { type: 'run-started' | 'run-finished' | 'intervention-failed' }>;

function applyProblemEvent(problem: ProblemProgress, event: ProblemEvent): void {
  switch (event.type) {
    case 'problem-started':
      Object.assign(problem, { index: event.index, status: 'running', stage: event.strategy });
      return;
    case 'model-called':
      problem.stage = 'asking the model';
      return;
    case 'model-replied':
      problem.stage = 'reading the reply';
      return;
    case 'model-call-failed':
      problem.last = `model call failed: ${event.message}`;
      return;
    case 'model-exhausted':
      // The replay's normal end: the stage says so, and the last verdict stays in view.
      problem.stage = 'no replies left';
      return;
    case 'reply-without-code':
      problem.last = 'reply without code';
      return;
    case 'candidate-submitted':
      // Until its first stage: a worker process starting (Python importing PyTorch), the device, a build slot.
      problem.stage = `starting #${event.candidateNumber}`;
      return;
    case 'candidate-stage': {
      const name = STAGE_NAMES[event.progress.stage] ?? event.progress.stage;
      if (event.progress.kind === 'stage-started') problem.stage = `${name} #${event.candidateNumber}`;
      return;
    }
    case 'candidate-evaluated':
      problem.last = `#${event.candidateNumber} ${event.verdict}${event.speedup === null ? '' : ` ${formatSpeedup(event.speedup)}`}`;
      problem.stage = `evaluated #${event.candidateNumber}`;
      return;
    case 'best-improved':
      return;
    case 'problem-stalled':
      problem.last = `stalled (${event.policy})`;
      return;
    case 'strategy-switched':
      problem.stage = event.to;
      return;
    case 'problem-finished':
      Object.assign(problem, { status: 'done', stage: `done: ${END_REASONS[event.reason]}` });
      return;
  }
}
