import type { ChatMessage, ModelReply } from '../../llm/kernel-model.js';
import { extractCandidate, isExtractionFailure } from '../../llm/replies/extract-code.js';
import type { JsonObject, RunStore } from '../../store/run-store.js';
import type { Attempt, CandidateRecord, EvaluatedAttempt, Lineage } from '../search/state/attempt.js';
import { bestAttempt, isImprovement, medianMs, speedupOf } from '../search/selection/candidate-ranking.js';
import { CandidateEvaluator } from './candidate-evaluator.js';
import { CandidateNumbers } from './candidate-numbers.js';
import { summarizeEvaluation } from '../search/prompts/feedback.js';
import type { ProposedIdea } from '../search/prompts/idea-parser.js';
import { callModel } from './model-caller.js';
import type { AttemptRequest, ProblemSession, SessionIdea, SessionStopReason } from '../search/strategies/problem-session.js';
import type { PromptProblem, ShownCandidate } from '../search/prompts/prompt-builder.js';
import type { SearchEvent } from '../search/state/search-events.js';
import { targetFromEnvironment } from '../search/prompts/target-device.js';
import type { RecordedProblemSessionOptions } from './recorded-problem-session-options.js';

/** A {@link ProblemSession} that records everything in a {@link RunStore} as it happens. */
export class RecordedProblemSession implements ProblemSession {
  readonly history: Attempt[];
  prompt: PromptProblem;
  private bestSoFar: EvaluatedAttempt | null;
  private consecutiveModelFailures = 0;
  private ended: SessionStopReason | null = null;
  private readonly candidates: CandidateEvaluator;
  private readonly numbers: CandidateNumbers;

  constructor(private readonly options: RecordedProblemSessionOptions) {
    this.history = [...options.history];
    this.prompt = options.prompt;
    this.bestSoFar = bestAttempt(this.history);
    this.numbers = new CandidateNumbers(this.history);
    this.candidates = new CandidateEvaluator({
      runId: options.runId,
      problem: options.problem,
      store: options.store,
      evaluator: options.evaluator,
      evaluation: options.evaluation,
      candidatesDir: options.candidatesDir,
      deviceName: options.prompt.target.name,
      signal: options.signal,
      onMachineFault: (fault) => {
        // No verdict: recorded for the run's history, the candidate stays unevaluated meanwhile.
        void this.record('evaluation-machine-fault', { attempt: fault.attempt, willRetry: fault.willRetry, message: fault.message }).catch(() => undefined);
      },
      onProgress: (candidateId, progress) => this.emit({ type: 'candidate-stage', candidateId, candidateNumber: this.numbers.of(candidateId), progress }),
    });
  }

  get best(): EvaluatedAttempt | null {
    return this.bestSoFar;
  }

  stopReason(): SessionStopReason | null {
    if (this.options.signal.aborted) return { kind: 'stopped' };
    const limit = this.options.budget.stopReason();
    if (limit) return { kind: 'budget', limit };
    return this.ended;
  }

  /** Ends the session: no attempt starts after this. The first reason given stands. */
  end(reason: SessionStopReason): void {
    this.ended ??= reason;
  }

  /** Lets work go on after a strategy switch (the new strategy continues the same history). */
  reopen(): void {
    if (this.ended?.kind === 'switch-strategy') this.ended = null;
  }

  async attempt(request: AttemptRequest): Promise<Attempt | null> {
    if (this.stopReason() || !this.options.budget.reserveCandidate()) return null;
    const called = await this.call(request.messages, request.lineage.round, request.temperature);
    if (called.kind === 'failed') {
      this.options.budget.releaseCandidate();
      const attempt: Attempt = { kind: 'model-failed', lineage: request.lineage, message: called.message };
      await this.record('model-call-failed', {
        ...lineagePayload(request.lineage),
        modelCallId: called.modelCallId,
        message: called.message,
        exhausted: called.exhausted,
      });
      this.emitCallFailed(called);
      this.history.push(attempt);
      return attempt;
    }
    const candidateNumber = this.numbers.nextReply();
    const extraction = (this.options.extract ?? extractCandidate)(called.reply.text);
    if (isExtractionFailure(extraction)) {
      const attempt: Attempt = { kind: 'no-code', lineage: request.lineage, modelCallId: called.modelCallId, reason: extraction.message };
      await this.record('reply-without-code', {
        ...lineagePayload(request.lineage),
        modelCallId: called.modelCallId,
        error: extraction.error,
        reason: extraction.message,
      });
      this.emit({ type: 'reply-without-code', reason: extraction.message });
      this.history.push(attempt);
      await this.observeStall(false);
      return attempt;
    }
    const candidate = await this.candidates.add(extraction.code, request.lineage, called.modelCallId);
    this.numbers.assign(candidate.id, candidateNumber);
    return this.evaluate(candidate);
  }

  /** A person's hint, in every prompt of this problem from now on. */
  addHint(note: string): void {
    if (this.prompt.hints.includes(note)) return;
    this.prompt = { ...this.prompt, hints: [...this.prompt.hints, note] };
  }

  /**
   * Adds a candidate evaluated outside the search (a person's edit, judged by `kforge serve`) to
   * the history, where the strategy weighs it like its own; no budget is spent on it.
   */
  adopt(attempt: EvaluatedAttempt): void {
    if (this.history.some((known) => known.kind === 'evaluated' && known.candidate.id === attempt.candidate.id)) return;
    this.history.push(attempt);
    this.bestSoFar = bestAttempt(this.history);
  }

  /** Evaluates a stored candidate (a new one, or one a killed run left unevaluated) and records it. */
  async evaluate(candidate: CandidateRecord): Promise<EvaluatedAttempt> {
    const candidateNumber = this.numbers.of(candidate.id);
    this.emit({ type: 'candidate-submitted', candidateId: candidate.id, candidateNumber });
    const evaluated = await this.candidates.evaluate(candidate);
    const { result } = evaluated;
    this.options.budget.recordDeviceTime(evaluated.deviceMs);
    if (result.environment) {
      this.prompt = { ...this.prompt, target: targetFromEnvironment(result.environment, this.prompt.backend) };
    }
    const attempt: EvaluatedAttempt = { kind: 'evaluated', lineage: candidate.lineage, candidate, result, deviceMs: evaluated.deviceMs };
    const baseline = this.options.speedupBaseline ?? 'eager';
    const speedup = speedupOf(result, baseline);
    this.options.budget.recordSpeedup(speedup);
    this.emit({
      type: 'candidate-evaluated',
      candidateId: candidate.id,
      candidateNumber,
      verdict: result.verdict,
      speedup,
      deviceMs: evaluated.deviceMs,
      reused: evaluated.reused,
    });
    const improved = isImprovement(result, this.bestSoFar?.result ?? null, this.options.minRelativeGain ?? 0.01);
    this.history.push(attempt);
    this.bestSoFar = bestAttempt(this.history);
    if (improved) {
      const median = medianMs(result) ?? 0;
      await this.record('best-improved', { candidateId: candidate.id, speedup, medianMs: median });
      this.emit({ type: 'best-improved', candidateId: candidate.id, speedup, medianMs: median });
    }
    await this.observeStall(improved);
    return attempt;
  }

  async ask(messages: ChatMessage[], round: number): Promise<string | null> {
    if (this.stopReason()) return null;
    const called = await this.call(messages, round);
    if (called.kind === 'failed') {
      await this.record('model-call-failed', {
        round,
        modelCallId: called.modelCallId,
        message: called.message,
        purpose: 'ideas',
        exhausted: called.exhausted,
      });
      this.emitCallFailed(called);
      return null;
    }
    return called.reply.text;
  }

  async addIdeas(round: number, ideas: readonly ProposedIdea[]): Promise<SessionIdea[]> {
    const stored: SessionIdea[] = [];
    for (const idea of ideas) {
      const record = await this.options.store.addIdea({
        runId: this.options.runId,
        problemHash: this.options.problem.hash,
        round,
        label: idea.label,
        text: idea.text,
      });
      stored.push({ id: record.id, label: record.label, text: record.text, round: record.round, status: record.status });
    }
    return stored;
  }

  async ideas(): Promise<SessionIdea[]> {
    const ideas = await this.options.store.listIdeas(this.options.runId, { problemHash: this.options.problem.hash });
    return ideas.map((idea) => ({ id: idea.id, label: idea.label, text: idea.text, round: idea.round, status: idea.status }));
  }

  show(attempt: EvaluatedAttempt): ShownCandidate {
    return { id: attempt.candidate.id, source: attempt.candidate.source, feedback: summarizeEvaluation(attempt.result, this.options.feedback) };
  }

  async recordEvent(type: string, payload: JsonObject): Promise<void> {
    await this.record(type, payload);
  }

  private async call(
    messages: ChatMessage[],
    round: number,
    temperature?: number,
  ): Promise<{ kind: 'replied'; reply: ModelReply; modelCallId: number } | { kind: 'failed'; message: string; exhausted: boolean; modelCallId: number }> {
    const { store, runId, problem, modelLabel, budget } = this.options;
    this.emit({ type: 'model-called' });
    const outcome = await callModel({
      model: this.options.model,
      limiter: this.options.limiter,
      messages,
      signal: this.options.signal,
      remainingMs: budget.remainingWallMs(),
      ...(temperature === undefined ? {} : { temperature }),
    });
    const base = { runId, problemHash: problem.hash, round, model: modelLabel, messages };
    if (outcome.kind === 'failed') {
      const call = await store.recordModelCall({ ...base, error: outcome.message, latencyMs: outcome.latencyMs });
      this.consecutiveModelFailures += 1;
      if (outcome.exhausted) this.end({ kind: 'model-exhausted', message: outcome.message });
      if (this.consecutiveModelFailures >= (this.options.maxConsecutiveModelFailures ?? 3)) {
        this.end({ kind: 'model-unavailable', message: outcome.message });
      }
      return { kind: 'failed', message: outcome.message, exhausted: outcome.exhausted, modelCallId: call.id };
    }
    this.consecutiveModelFailures = 0;
    const { reply } = outcome;
    const call = await store.recordModelCall({
      ...base,
      replyText: reply.text,
      reasoningText: reply.reasoningText ?? null,
      inputTokens: reply.usage.inputTokens,
      outputTokens: reply.usage.outputTokens,
      latencyMs: reply.latencyMs,
      costUsd: reply.priced ? reply.costUsd : null,
    });
    const tokens = reply.usage.inputTokens + reply.usage.outputTokens;
    budget.recordModelUsage(tokens, reply.priced ? reply.costUsd : null);
    this.emit({ type: 'model-replied', tokens, costUsd: reply.costUsd, latencyMs: reply.latencyMs });
    return { kind: 'replied', reply, modelCallId: call.id };
  }

  /** A replay that ran out is the end of its replies, not a failure of the model. */
  private emitCallFailed(called: { message: string; exhausted: boolean }): void {
    if (called.exhausted) this.emit({ type: 'model-exhausted', message: called.message });
    else this.emit({ type: 'model-call-failed', message: called.message });
  }

  private async observeStall(improved: boolean): Promise<void> {
    const stall = this.options.stall.observe(improved);
    if (!stall) return;
    const candidateAttempts = this.history.filter((attempt) => attempt.kind === 'evaluated' || attempt.kind === 'no-code').length;
    await this.record('problem-stalled', { ...stall, attemptCount: candidateAttempts });
    this.emit({ type: 'problem-stalled', candidatesWithoutImprovement: stall.candidatesWithoutImprovement, policy: stall.policy });
    if (stall.policy === 'pause') this.end({ kind: 'paused' });
    if (stall.policy === 'switch-strategy') this.end({ kind: 'switch-strategy' });
  }

  private async record(type: string, payload: JsonObject): Promise<void> {
    const elapsedMs = this.options.budget.usage().elapsedMs;
    await this.options.store.recordEvent({ runId: this.options.runId, problemHash: this.options.problem.hash, type, payload: { ...payload, elapsedMs } });
  }

  private emit(event: DistributiveOmit<SearchEvent, 'problem' | 'problemHash' | 'usage'>): void {
    const { problem, onEvent, budget } = this.options;
    onEvent?.({ ...event, problem: problem.name, problemHash: problem.hash, usage: budget.usage() } as SearchEvent);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

function lineagePayload(lineage: Lineage): JsonObject {
  return { round: lineage.round, parentCandidateId: lineage.parentCandidateId, ideaId: lineage.idea?.id ?? null };
}
