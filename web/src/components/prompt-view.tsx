import type { ModelCallView } from '../../../src/server/api-types';
import { cost, count, ms } from '../lib/format';

const text = (content: ModelCallView['messages'][number]['content']): string =>
  typeof content === 'string' ? content : content.map((part) => (typeof part.text === 'string' ? part.text : JSON.stringify(part))).join('\n');

/** The prompt (as chat messages) and the reply that produced a candidate. */
export function PromptView({ call, origin }: { call: ModelCallView | null; origin: string }) {
  if (!call) {
    return (
      <p className="muted">
        {origin === 'human'
          ? 'A person wrote this candidate in the dashboard: there is no prompt.'
          : origin === 'files'
            ? 'This candidate came from a file: there is no prompt.'
            : 'The store holds no model call for this candidate.'}
      </p>
    );
  }
  return (
    <div data-testid="prompt-view">
      <p className="muted" style={{ marginTop: 0 }}>
        {call.model} · round {call.round ?? '–'} · {count(call.inputTokens ?? 0)} tokens in, {count(call.outputTokens ?? 0)} out · {ms(call.latencyMs)} ·{' '}
        {cost(call.costUsd)}
      </p>
      {call.error ? <p className="notice">The call failed: {call.error}</p> : null}
      {call.messages.map((message, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a model call's messages in their order; a message's place in the conversation is its identity.
        <div className="message" key={index}>
          <div className="role">{message.role}</div>
          <pre>{text(message.content)}</pre>
        </div>
      ))}
      {call.reasoningText ? (
        <div className="message">
          <div className="role">reasoning</div>
          <pre>{call.reasoningText}</pre>
        </div>
      ) : null}
      <div className="message">
        <div className="role">reply</div>
        <pre>{call.replyText ?? '(no reply text)'}</pre>
      </div>
    </div>
  );
}
