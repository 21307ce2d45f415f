import { z } from 'zod';
import { choiceFlag } from '../flags/flag-schemas.js';
import { buildRunReport } from '../../server/report/report-data.js';
import { REPORT_FORMATS, renderReport } from '../../server/report/report-format.js';
import { openRunStore, resolveStorePath, type OpenRunStoreOptions } from '../../store/sqlite/open-run-store.js';
import type { RunStore } from '../../store/run-store.js';
import { resolveCliIo, type CliIo } from '../io/cli-io.js';
import { storeCommandFailure } from './store-command-errors.js';
import { UsageError } from '../io/usage-error.js';
import { writeCommandOutput } from '../io/command-output.js';
import { unknownRunMessage } from './unknown-run-message.js';

/** What `kforge report` needs beyond its io; tests replace any of it. */
export interface ReportCommandDependencies extends Partial<CliIo> {
  openStore?: (options: OpenRunStoreOptions) => Promise<RunStore>;
  /** Clock for the report's `generatedAt`. */
  now?: () => Date;
}

const optionsSchema = z.object({
  format: choiceFlag('--format', REPORT_FORMATS).default('md'),
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
 * What `kforge report RUN_ID` does once its arguments are parsed (its registration is report.ts,
 * which loads this module only then): writes the report and sets the exit status, 2 for misuse and
 * 1 for a store whose data cannot be read.
 */
export async function reportAction(runId: string, rawOptions: unknown, dependencies: ReportCommandDependencies): Promise<void> {
  const io = resolveCliIo(dependencies);
  try {
    io.setExitCode(await run(io, runId, rawOptions, dependencies));
  } catch (error) {
    io.setExitCode(storeCommandFailure('report', error, io.stderr));
  }
}
