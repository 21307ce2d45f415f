import type { Command } from 'commander';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { z } from 'zod';
import { choiceFlag } from '../flags/flag-schemas.js';
import { exportRunTurns } from '../../agent/export/run-turns-export.js';
import { REWARD_SHAPING_NAMES, resolveRewardShaping, rewardShapingInputSchema, type RewardShaping } from '../../core/reward-shaping-schema.js';
import { DEFAULT_STORE_PATH, openRunStore, resolveStorePath, type OpenRunStoreOptions } from '../../store/sqlite/open-run-store.js';
import type { RunStore } from '../../store/run-store.js';
import { resolveCliIo, type CliIo } from '../io/cli-io.js';
import { storeCommandFailure } from './store-command-errors.js';
import { UsageError } from '../io/usage-error.js';
import { writeCommandOutput } from '../io/command-output.js';
import { unknownRunMessage } from './unknown-run-message.js';

/** What `kforge export` needs beyond its io; tests replace any of it. */
export interface ExportCommandDependencies extends Partial<CliIo> {
  openStore?: (options: OpenRunStoreOptions) => Promise<RunStore>;
}

/** Formats `kforge export` writes. */
export const EXPORT_FORMATS = ['jsonl'] as const;
/** Values of `--only`. */
const ONLY_VALUES = ['correct'] as const;

const optionsSchema = z.object({
  format: choiceFlag('--format', EXPORT_FORMATS).default('jsonl'),
  only: choiceFlag('--only', ONLY_VALUES).optional(),
  store: z.string().min(1, 'expected `--store` to name a database file, got an empty string').optional(),
  out: z.string().min(1, 'expected `--out` to name a file, got an empty string').optional(),
  shaping: z.string().optional(),
});

/** `--shaping NAME` or `--shaping '{"name":…,"params":…}'`, resolved as the reward API resolves it. */
function parseShaping(text: string | undefined): RewardShaping | undefined {
  if (text === undefined) return undefined;
  let input: unknown = text;
  if (text.trim().startsWith('{')) {
    try {
      input = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`expected \`--shaping\` to be a shaping name or a JSON object, got \`${text}\`: ${(error as Error).message}`);
    }
  }
  const parsed = rewardShapingInputSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
    throw new UsageError(
      `bad \`--shaping\`${where}: ${issue?.message ?? 'invalid'} (one of ${REWARD_SHAPING_NAMES.join(', ')}, or { name, params }: docs/reward.md)`,
    );
  }
  return resolveRewardShaping(parsed.data);
}

async function run(io: CliIo, runId: string, rawOptions: unknown, dependencies: ExportCommandDependencies): Promise<number> {
  const parsed = optionsSchema.safeParse(rawOptions);
  if (!parsed.success) throw new UsageError(parsed.error.issues[0]?.message ?? 'invalid options');
  const options = parsed.data;
  const shaping = parseShaping(options.shaping);
  const store = await (dependencies.openStore ?? openRunStore)({ path: resolveStorePath({ path: options.store, cwd: io.cwd }), mustExist: true });
  try {
    const turns = await exportRunTurns(store, runId, {
      ...(options.only ? { only: options.only } : {}),
      ...(shaping ? { shaping } : {}),
    });
    if (!turns) throw new UsageError(unknownRunMessage(runId, store.location));
    const text = turns.map((turn) => `${JSON.stringify(turn)}\n`).join('');
    await writeCommandOutput(io, options.out, text, (file) => `kforge export: ${turns.length} turn(s) of run ${runId} written to ${file}`);
    return 0;
  } finally {
    await store.close();
  }
}

/**
 * Adds `kforge export RUN_ID [--format jsonl] [--only correct] [--shaping S] [--out FILE] [--store PATH]`: one
 * JSON line per model turn of the run (docs/export.md), in model-call order, on stdout or into
 * `--out`. Exit status 0, 2 for misuse (unknown run, missing store, bad flag), 1 for a store whose
 * data cannot be read.
 */
export function registerExportCommand(program: Command, dependencies: ExportCommandDependencies = {}): Command {
  return program
    .command('export')
    .description(COMMAND_DESCRIPTIONS.export)
    .argument('<run-id>', 'a run id, as `kforge runs list` prints it')
    .option('--format <format>', `${EXPORT_FORMATS.join(', ')} (default jsonl)`)
    .option('--only <which>', 'correct: keep only turns whose candidate is correct')
    .option(
      '--shaping <shaping>',
      `reward shaping of the reward API: ${REWARD_SHAPING_NAMES.join(', ')} or a JSON { name, params } (default log-speedup; docs/reward.md)`,
    )
    .option('--store <path>', `the store database (default ${DEFAULT_STORE_PATH})`)
    .option('--out <file>', 'write the lines to this file instead of standard output')
    .action(async (runId: string, rawOptions: unknown) => {
      const io = resolveCliIo(dependencies);
      try {
        io.setExitCode(await run(io, runId, rawOptions, dependencies));
      } catch (error) {
        io.setExitCode(storeCommandFailure('export', error, io.stderr));
      }
    });
}
