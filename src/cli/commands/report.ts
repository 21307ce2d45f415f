import type { Command } from 'commander';
import { COMMAND_DESCRIPTIONS } from '../command-descriptions.js';
import { z } from 'zod';
import { buildRunReport } from '../../server/report/report-data.js';
import { REPORT_FORMATS, renderReport, reportFormatSchema } from '../../server/report/report-format.js';
import { StoreDataError } from '../../store/errors/store-data-error.js';
import { StoreNotFoundError } from '../../store/errors/store-not-found-error.js';
import { StoreOpenError } from '../../store/errors/store-open-error.js';
import { StoreSchemaError } from '../../store/errors/store-schema-error.js';
import { DEFAULT_STORE_PATH, openRunStore, resolveStorePath, type OpenRunStoreOptions } from '../../store/open-run-store.js';
import type { RunStore } from '../../store/run-store.js';
import { EXIT, resolveCliIo, type CliIo } from '../cli-io.js';
import { UsageError } from '../usage-error.js';
import { writeCommandOutput } from '../command-output.js';
import { unknownRunMessage } from '../unknown-run-message.js';

/** What `kforge report` needs beyond its io; tests replace any of it. */
export interface ReportCommandDependencies extends Partial<CliIo> {
  openStore?: (options: OpenRunStoreOptions) => Promise<RunStore>;
  /** Clock for the report's `generatedAt`. */
  now?: () => Date;
}

const optionsSchema = z.object({
  format: z
    .string()
    .default('md')
    .transform((text, context) => {
      const parsed = reportFormatSchema.safeParse(text);
      if (parsed.success) return parsed.data;
      context.addIssue({ code: 'custom', message: `expected \`--format\` to be one of ${REPORT_FORMATS.join(', ')}, got \`${text}\`` });
      return z.NEVER;
    }),
  store: z.string().min(1, 'expected `--store` to name a database file, got an empty string').optional(),
  out: z.string().min(1, 'expected `--out` to name a file, got an empty string').optional(),
});

async function run(io: CliIo, runId: string, rawOptions: unknown, dependencies: ReportCommandDependencies): Promise<number> {
  const parsed = optionsSchema.safeParse(rawOptions);
  if (!parsed.success) throw new UsageError(parsed.error.issues[0]?.message ?? 'invalid options');
  const options = parsed.data;
  const store = await (dependencies.openStore ?? openRunStore)({ path: resolveStorePath({ path: options.store, cwd: io.cwd }), mustExist: true });
  try {
    const report = await buildRunReport(store, runId, dependencies.now ? { now: dependencies.now } : {});
    if (!report) throw new UsageError(unknownRunMessage(runId, store.location));
    const { text } = renderReport(report, options.format);
    await writeCommandOutput(io, options.out, text, (file) => `kforge report: ${options.format} report of run ${runId} written to ${file}`);
    return 0;
  } finally {
    await store.close();
  }
}

/**
 * Adds `kforge report RUN_ID [--format md|html|csv|json] [--store PATH] [--out FILE]`: per
 * problem and per level, verdicts, `fast_p` at 0, 1, 1.5 and 2, geometric-mean speedups against
 * eager, compile and the best baseline, share of speed of light, tokens and cost. The HTML report
 * is one self-contained file with its plots. Exit status 0, or 2 for misuse (unknown run, missing
 * store, bad flag).
 */
export function registerReportCommand(program: Command, dependencies: ReportCommandDependencies = {}): Command {
  return program
    .command('report')
    .description(COMMAND_DESCRIPTIONS.report)
    .argument('<run-id>', 'a run id, as `kforge runs list` prints it')
    .option('--format <format>', `${REPORT_FORMATS.join(', ')} (default md)`)
    .option('--store <path>', `the store database (default ${DEFAULT_STORE_PATH})`)
    .option('--out <file>', 'write the report to this file instead of standard output')
    .action(async (runId: string, rawOptions: unknown) => {
      const io = resolveCliIo(dependencies);
      try {
        io.setExitCode(await run(io, runId, rawOptions, dependencies));
      } catch (error) {
        const usage = [UsageError, StoreNotFoundError, StoreOpenError, StoreSchemaError].some((kind) => error instanceof kind);
        if (!usage && !(error instanceof StoreDataError)) throw error;
        io.stderr.write(`kforge report: ${(error as Error).message}\n`);
        io.setExitCode(usage ? EXIT.usage : 1);
      }
    });
}
