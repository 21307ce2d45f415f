import type { KernelModel, KernelModelRequest, ModelDescription, ModelReply } from '../src/llm/kernel-model.js';
import { ModelExhaustedError } from '../src/llm/model-exhausted-error.js';

/**
 * One scripted answer: a reply text, a partial reply (missing fields get fake-model defaults), an
 * error to throw (a `ModelCallError` to simulate a failing provider), or a function of the request.
 */
export type FakeStep =
  | string
  | (Partial<ModelReply> & { text: string })
  | Error
  | ((request: KernelModelRequest, callIndex: number) => string | ModelReply | Promise<string | ModelReply>);

export interface FakeKernelModelOptions {
  replies: readonly FakeStep[];
  provider?: string;
  modelId?: string;
  /** Cost charged per call, USD. Default 0. */
  costUsdPerCall?: number;
}

/**
 * A scripted `KernelModel` for tests of the search and the CLI. It records every request in
 * `calls` (a copy of the messages, so later mutation does not change the record), answers with the
 * next step, and throws `ModelExhaustedError` when the script is used up. Its replies are scripted
 * text, not a model's output.
 */
export class FakeKernelModel implements KernelModel {
  readonly calls: KernelModelRequest[] = [];
  private readonly steps: readonly FakeStep[];
  private readonly provider: string;
  private readonly modelId: string;
  private readonly costUsdPerCall: number;

  constructor(options: FakeKernelModelOptions) {
    this.steps = options.replies;
    this.provider = options.provider ?? 'fake';
    this.modelId = options.modelId ?? 'fake-model';
    this.costUsdPerCall = options.costUsdPerCall ?? 0;
  }

  describe(): ModelDescription {
    return { provider: this.provider, modelId: this.modelId };
  }

  /** Steps not yet used. */
  remaining(): number {
    return this.steps.length - this.calls.length;
  }

  async generate(request: KernelModelRequest): Promise<ModelReply> {
    const index = this.calls.length;
    this.calls.push({ ...request, messages: request.messages.map((message) => ({ ...message })) });
    request.signal?.throwIfAborted();
    const step = this.steps[index];
    if (step === undefined) {
      throw new ModelExhaustedError(`FakeKernelModel has no reply left for call ${index + 1}.`, {
        provider: this.provider,
        modelId: this.modelId,
        repliesServed: this.steps.length,
      });
    }
    if (step instanceof Error) throw step;
    const answer = typeof step === 'function' ? await step(request, index) : step;
    return typeof answer === 'string' ? this.reply({ text: answer }) : this.reply(answer);
  }

  private reply(partial: Partial<ModelReply> & { text: string }): ModelReply {
    return {
      usage: { inputTokens: 0, outputTokens: 0 },
      latencyMs: 0,
      costUsd: this.costUsdPerCall,
      priced: true,
      provider: this.provider,
      modelId: this.modelId,
      finishReason: 'stop',
      attempts: 1,
      failedAttempts: [],
      warnings: [],
      ...partial,
    };
  }
}
