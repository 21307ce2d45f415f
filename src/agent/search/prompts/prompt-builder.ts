import type { Backend, Precision } from '../../../core/verdict.js';
import type { ChatMessage } from '../../../llm/kernel-model.js';
import { backendRules, GUARD_POLICY, REPLY_FORMAT } from './backend-rules.js';
import { describeTarget, type TargetDevice } from './target-device.js';

/** What every prompt about one problem carries. */
export interface PromptProblem {
  /** File stem of the problem (`01_relu`). */
  name: string;
  /** The problem file's full source (defines `Model`, `get_inputs`, `get_init_inputs`). */
  referenceSource: string;
  backend: Backend;
  precision: Precision;
  target: TargetDevice;
  /** Notes a person left for this problem (hints), oldest first. */
  hints: readonly string[];
  /**
   * A problem folder's declarations (docs/problems.md): the shapes every candidate is checked and
   * timed at (module constants as shapes.py writes them), names it must not use, and its declared
   * tolerance per dtype. Absent for a single-file problem.
   */
  folder?: {
    shapes: readonly Readonly<Record<string, number | boolean>>[];
    forbidden: readonly string[];
    tolerance?: unknown;
  };
}

/** A candidate shown to the model: its id, source and what the evaluator found. */
export interface ShownCandidate {
  id: number;
  source: string;
  /** Trimmed evaluation (see `summarizeEvaluation`). */
  feedback: string;
}

/** What the model is asked to do in one turn. */
export type KernelTask =
  | { kind: 'write' }
  | { kind: 'refine'; parent: ShownCandidate; goal: 'fix' | 'speed-up' }
  | { kind: 'reply-without-code'; reason: string; parent: ShownCandidate | null }
  | { kind: 'implement-idea'; idea: string; seed: ShownCandidate | null };

export interface KernelPromptInput {
  problem: PromptProblem;
  task: KernelTask;
  /** One line per earlier attempt the strategy chooses to show, oldest first. */
  history?: readonly string[];
}

export interface IdeasPromptInput {
  problem: PromptProblem;
  /** How many ideas to propose. */
  count: number;
  /** Ideas already tried, each with how its implementations did, one line each. */
  triedIdeas: readonly string[];
  /** Earlier good kernels, fastest first. */
  bank: readonly ShownCandidate[];
}

function systemMessage(problem: PromptProblem): ChatMessage {
  const rules = backendRules(problem.backend).map((rule) => `- ${rule}`);
  const guard = GUARD_POLICY.map((rule) => `- ${rule}`);
  const content = [
    `You are an expert performance engineer. You replace a PyTorch reference with a faster ${problem.backend} implementation that computes the same result.`,
    '',
    `Rules for the ${problem.backend} backend:`,
    ...rules,
    '',
    'What the evaluator checks (a candidate that fails any check is rejected):',
    ...guard,
    '',
    REPLY_FORMAT,
  ].join('\n');
  return { role: 'system', content };
}

function fenced(language: string, source: string): string {
  return [`\`\`\`${language}`, source.trimEnd(), '```'].join('\n');
}

function problemSection(problem: PromptProblem, history: readonly string[]): string[] {
  const lines = [
    `Problem \`${problem.name}\`, run precision ${problem.precision === 'native' ? "native (the problem's own dtypes, uncast)" : problem.precision}. The reference:`,
    fenced('python', problem.referenceSource),
    ...folderLines(problem),
    '',
    'Target:',
    ...describeTarget(problem.target).map((line) => `- ${line}`),
  ];
  if (history.length > 0) lines.push('', 'Attempts so far:', ...history.map((line) => `- ${line}`));
  if (problem.hints.length > 0) lines.push('', 'Notes from the engineer overseeing this search:', ...problem.hints.map((hint) => `- ${hint}`));
  return lines;
}

/** A problem folder's shapes, forbidden names and declared tolerance, under the reference. */
function folderLines(problem: PromptProblem): string[] {
  const folder = problem.folder;
  if (!folder) return [];
  const lines: string[] = [];
  if (folder.shapes.length > 0) {
    lines.push(
      '',
      `Every candidate is checked and timed at each of these ${folder.shapes.length} shapes (each sets the reference's module constants of those names, matched by case); it must be correct at all of them, and its speedup is the geometric mean over them:`,
      ...folder.shapes.map(
        (shape, index) =>
          `- shape ${index}: ${Object.entries(shape)
            .map(([key, value]) => `${key}=${String(value)}`)
            .join(', ')}`,
      ),
    );
  }
  if (folder.forbidden.length > 0) lines.push('', `Do not use: ${folder.forbidden.map((name) => `\`${name}\``).join(', ')} (the problem forbids them).`);
  if (folder.tolerance !== undefined) lines.push('', `Declared tolerance per output dtype: ${JSON.stringify(folder.tolerance)}.`);
  return lines;
}

function shown(candidate: ShownCandidate, heading: string): string[] {
  return [heading, fenced('python', candidate.source), 'What the evaluator found:', candidate.feedback];
}

function taskSection(task: KernelTask): string[] {
  switch (task.kind) {
    case 'write':
      return ['Write `ModelNew`: correct first, then as fast as you can make it on this target.'];
    case 'refine':
      return task.goal === 'fix'
        ? [
            ...shown(task.parent, `Your candidate #${task.parent.id}:`),
            '',
            'Fix it. Keep what was right, change what the evaluator reports, and return the whole file.',
          ]
        : [
            ...shown(task.parent, `The fastest correct candidate so far (#${task.parent.id}):`),
            '',
            'Make it faster while keeping it correct. Say in one sentence what you change and why it should help, then give the whole file.',
          ];
    case 'reply-without-code': {
      const lines = [`Your last reply could not be used: ${task.reason}`];
      if (task.parent) lines.push('', ...shown(task.parent, `The candidate it was meant to improve (#${task.parent.id}):`));
      lines.push('', 'Reply again with the complete file in one ```python code block.');
      return lines;
    }
    case 'implement-idea': {
      const lines = [`Implement this optimisation idea: ${task.idea}`];
      if (task.seed) lines.push('', ...shown(task.seed, `Start from this correct candidate (#${task.seed.id}):`));
      lines.push('', 'Give the whole file.');
      return lines;
    }
  }
}

/** System and user messages asking for one kernel. */
export function buildKernelPrompt(input: KernelPromptInput): ChatMessage[] {
  const user = [...problemSection(input.problem, input.history ?? []), '', ...taskSection(input.task)].join('\n');
  return [systemMessage(input.problem), { role: 'user', content: user }];
}

/** The reply format the ideas prompt asks for, checked by `parseIdeas`. */
export const IDEAS_REPLY_FORMAT = 'Reply with a JSON array only, in one ```json code block: `[{"label": "short-kebab-name", "idea": "one or two sentences"}]`.';

/** System and user messages asking for `count` optimisation ideas in plain language. */
export function buildIdeasPrompt(input: IdeasPromptInput): ChatMessage[] {
  const lines = [...problemSection(input.problem, [])];
  if (input.triedIdeas.length > 0) lines.push('', 'Ideas already tried and how they did:', ...input.triedIdeas.map((line) => `- ${line}`));
  for (const candidate of input.bank) lines.push('', ...shown(candidate, `A good earlier kernel (#${candidate.id}):`));
  lines.push(
    '',
    `Propose ${input.count} distinct optimisation ideas for this problem on this target, in plain language, each one a concrete change an implementer can make (memory access, parallelisation, fusion, vectorisation, tiling, algorithmic rewrites). Do not repeat an idea already tried unless you say what is different. Do not write code.`,
    IDEAS_REPLY_FORMAT,
  );
  const system = systemMessage(input.problem);
  return [
    { role: 'system', content: system.content.replace(REPLY_FORMAT, 'In this turn you propose ideas; implementations are written later, one per idea.') },
    { role: 'user', content: lines.join('\n') },
  ];
}
