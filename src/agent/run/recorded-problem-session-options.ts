import type { EvaluationRequest, Evaluator } from '../../eval/evaluator.js';
import type { KernelModel } from '../../llm/kernel-model.js';
import type { CandidateExtraction } from '../../llm/replies/extract-code.js';
import type { RunStore } from '../../store/run-store.js';
import type { FeedbackOptions } from '../search/prompts/feedback.js';
import type { PromptProblem } from '../search/prompts/prompt-builder.js';
import type { SpeedupBaseline } from '../search/selection/candidate-ranking.js';
import type { Attempt } from '../search/state/attempt.js';
import type { BudgetTracker } from '../search/state/budget.js';
import type { SearchEventListener } from '../search/state/search-events.js';
import type { StallDetector } from '../search/state/stall-detector.js';
import type { ConcurrencyLimiter } from './concurrency-limiter.js';

/** The evaluator settings of a run: a request without its two paths. */
export type RunEvaluationOptions = Omit<EvaluationRequest, 'problemPath' | 'candidatePath'>;

/** What a `RecordedProblemSession` works with: the run's problem, store, model, evaluator, budget and signal. */
export interface RecordedProblemSessionOptions {
  runId: string;
  problem: { hash: string; name: string; path: string };
  prompt: PromptProblem;
  store: RunStore;
  model: KernelModel;
  /** The model as stored on each call (`openai:gpt-5`). */
  modelLabel: string;
  limiter: ConcurrencyLimiter;
  evaluator: Evaluator;
  evaluation: RunEvaluationOptions;
  budget: BudgetTracker;
  stall: StallDetector;
  /** Folder the candidate files are written to (one subfolder per problem). */
  candidatesDir: string;
  /** Attempts reconstructed from the store (resume); empty for a new problem. */
  history: Attempt[];
  /** The run's signal: Ctrl-C aborts it. */
  signal: AbortSignal;
  /** Failed model calls in a row after which the problem stops. Default 3. */
  maxConsecutiveModelFailures?: number;
  /** Relative gain in median time that counts as an improvement. Default 0.01. */
  minRelativeGain?: number;
  speedupBaseline?: SpeedupBaseline;
  feedback?: FeedbackOptions;
  onEvent?: SearchEventListener;
  /** Injected for tests: takes the candidate out of a reply. */
  extract?: (replyText: string) => CandidateExtraction;
}
