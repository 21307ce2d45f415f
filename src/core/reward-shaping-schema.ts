import { z } from 'zod';

/**
 * Reward shapings as data: a name and its parameters, validated once at the boundary so that a
 * resolved shaping can never score a failed candidate at or above a correct one. The formulas are
 * in `docs/reward.md`; {@link shapeReward} applies them.
 */

export const REWARD_SHAPING_NAMES = ['binary', 'tiered', 'log-speedup'] as const;
export type RewardShapingName = (typeof REWARD_SHAPING_NAMES)[number];

/** The baseline a speedup is taken against: eager, `torch.compile`, or the faster of the two. */
export const REWARD_BASELINES = ['best', 'eager', 'compile'] as const;
export type RewardBaseline = (typeof REWARD_BASELINES)[number];

/** Every verdict but `correct`: each can carry its own penalty. */
export const FAILURE_VERDICTS = ['incorrect', 'compile_error', 'runtime_error', 'timeout', 'crashed', 'rejected', 'invalid_input'] as const;
export type FailureVerdict = (typeof FAILURE_VERDICTS)[number];

const finite = z.number().refine(Number.isFinite, 'expected a finite number');

const penaltiesSchema = z
  .strictObject(Object.fromEntries(FAILURE_VERDICTS.map((verdict) => [verdict, finite.optional()])) as Record<FailureVerdict, z.ZodOptional<typeof finite>>)
  .describe('reward of a verdict other than `correct`, by verdict; verdicts left out get `failure`');

const baselineSchema = z.enum(REWARD_BASELINES).describe('speedup against eager, torch.compile, or the faster of the two (`best`)');

/** Default tiers of `tiered`: ≥ 1x earns 1, ≥ 1.5x earns 2, ≥ 2x earns 3. */
export const DEFAULT_TIERS = [
  { speedup: 1, reward: 1 },
  { speedup: 1.5, reward: 2 },
  { speedup: 2, reward: 3 },
] as const;

const binaryParamsSchema = z.strictObject({
  correct: finite.default(1).describe('reward of a correct candidate'),
  failure: finite.default(0).describe('reward of any other verdict not named in `penalties`'),
  penalties: penaltiesSchema.default({}),
});

const tieredParamsSchema = z.strictObject({
  tiers: z
    .array(z.strictObject({ speedup: z.number().positive().refine(Number.isFinite, 'expected a finite speedup'), reward: finite }))
    .min(1)
    .max(16)
    .default(DEFAULT_TIERS.map((tier) => ({ ...tier })))
    .describe('a correct candidate at or above `speedup` earns `reward` (the highest tier reached counts)'),
  slower: finite.default(0).describe('reward of a correct candidate below every tier, or without a speedup (skipTiming)'),
  baseline: baselineSchema.default('best'),
  failure: finite.default(-1),
  penalties: penaltiesSchema.default({}),
});

const logSpeedupParamsSchema = z.strictObject({
  lo: finite.default(-0.5).describe('floor of log2(speedup) for a correct candidate'),
  hi: finite.default(3).describe('ceiling of log2(speedup)'),
  baseline: baselineSchema.default('best'),
  failure: finite.default(-1),
  penalties: penaltiesSchema.default({}),
});

export const binaryShapingSchema = z.strictObject({ name: z.literal('binary'), params: binaryParamsSchema.default(binaryParamsSchema.parse({})) });
export const tieredShapingSchema = z.strictObject({ name: z.literal('tiered'), params: tieredParamsSchema.default(tieredParamsSchema.parse({})) });
export const logSpeedupShapingSchema = z.strictObject({
  name: z.literal('log-speedup'),
  params: logSpeedupParamsSchema.default(logSpeedupParamsSchema.parse({})),
});

/** A shaping with every parameter filled in. */
export type BinaryShaping = z.infer<typeof binaryShapingSchema>;
export type TieredShaping = z.infer<typeof tieredShapingSchema>;
export type LogSpeedupShaping = z.infer<typeof logSpeedupShapingSchema>;
export type RewardShaping = BinaryShaping | TieredShaping | LogSpeedupShaping;

/** The reward a correct candidate gets from its correctness alone (no speedup known). */
export function correctnessReward(shaping: RewardShaping): number {
  if (shaping.name === 'binary') return shaping.params.correct;
  if (shaping.name === 'tiered') return shaping.params.slower;
  return Math.min(Math.max(0, shaping.params.lo), shaping.params.hi);
}

/** The lowest reward any correct candidate can get under the shaping. */
export function lowestCorrectReward(shaping: RewardShaping): number {
  if (shaping.name === 'binary') return shaping.params.correct;
  if (shaping.name === 'tiered') return shaping.params.slower;
  return shaping.params.lo;
}

/** The highest reward the shaping grants (to a correct candidate at or past its top). */
export function highestReward(shaping: RewardShaping): number {
  if (shaping.name === 'binary') return shaping.params.correct;
  if (shaping.name === 'tiered') return Math.max(shaping.params.slower, ...shaping.params.tiers.map((tier) => tier.reward));
  return shaping.params.hi;
}

/** The reward of a verdict other than `correct`. */
export function penaltyOf(shaping: RewardShaping, verdict: FailureVerdict): number {
  return shaping.params.penalties[verdict] ?? shaping.params.failure;
}

function checkShaping(shaping: RewardShaping, context: z.RefinementCtx): void {
  const issue = (path: Array<string | number>, message: string): void => context.addIssue({ code: 'custom', path: ['params', ...path], message });
  if (shaping.name === 'tiered') {
    const { tiers, slower } = shaping.params;
    tiers.forEach((tier, index) => {
      const previous = tiers[index - 1];
      if (previous && tier.speedup <= previous.speedup)
        issue(['tiers', index, 'speedup'], `expected tier speedups to increase, got ${previous.speedup} then ${tier.speedup}`);
      if (previous && tier.reward < previous.reward)
        issue(['tiers', index, 'reward'], `expected tier rewards not to decrease, got ${previous.reward} then ${tier.reward}`);
      if (tier.reward < slower) issue(['tiers', index, 'reward'], `expected every tier reward to be at least \`slower\` (${slower}), got ${tier.reward}`);
    });
  }
  if (shaping.name === 'log-speedup' && !(shaping.params.lo < shaping.params.hi)) {
    issue(['lo'], `expected \`lo\` to be below \`hi\`, got lo ${shaping.params.lo} and hi ${shaping.params.hi}`);
  }
  // The rule that makes the reward ungameable by failing: no failure scores as much as a correct candidate.
  const floor = lowestCorrectReward(shaping);
  const check = (path: Array<string | number>, value: number, what: string): void => {
    if (!(value < floor))
      issue(
        path,
        `${what} (${value}) must be below the lowest reward of a correct candidate (${floor}), so that no failure scores as much as a correct kernel`,
      );
  };
  check(['failure'], shaping.params.failure, '`failure`');
  for (const verdict of FAILURE_VERDICTS) {
    const value = shaping.params.penalties[verdict];
    if (value !== undefined) check(['penalties', verdict], value, `the penalty of \`${verdict}\``);
  }
}

/**
 * A shaping as a request gives it: a name alone (`"tiered"`) or `{ name, params }` with any
 * parameters left out taking their defaults. Rejected: unknown names or parameters, tiers out of
 * order, and any penalty at or above the lowest reward of a correct candidate.
 */
export const rewardShapingSchema = z.discriminatedUnion('name', [binaryShapingSchema, tieredShapingSchema, logSpeedupShapingSchema]).superRefine(checkShaping);

export const rewardShapingInputSchema = z
  .union([z.enum(REWARD_SHAPING_NAMES), rewardShapingSchema], {
    error: (issue) =>
      `expected \`shaping\` to be ${REWARD_SHAPING_NAMES.join(', ')} or { name, params } with one of those names, got ${JSON.stringify(issue.input)?.slice(0, 80)}`,
  })
  .describe('a shaping name (`binary`, `tiered`, `log-speedup`) or `{ name, params }`; default `log-speedup` (docs/reward.md)');
export type RewardShapingInput = z.input<typeof rewardShapingInputSchema>;

/** The default shaping: `log-speedup` with its default parameters. */
export const DEFAULT_REWARD_SHAPING: RewardShaping = logSpeedupShapingSchema.parse({ name: 'log-speedup' });

/**
 * The shaping with every default filled in.
 *
 * @throws z.ZodError for an unknown shaping or parameters that break the rules above.
 * @example resolveRewardShaping('tiered').params.tiers // [{ speedup: 1, reward: 1 }, …]
 */
export function resolveRewardShaping(input: RewardShapingInput | undefined): RewardShaping {
  if (input === undefined) return DEFAULT_REWARD_SHAPING;
  return rewardShapingSchema.parse(typeof input === 'string' ? { name: input } : input) as RewardShaping;
}
