import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import picocolors from 'picocolors';
import { z } from 'zod';
import { formatBytes } from '../../core/number-format.js';
import { defaultBaselineCacheDirectory } from '../../eval/cache/baseline-cache.js';
import { BuildCache, buildCacheMaxBytes, type BuildCacheStats } from '../../eval/cache/build-cache.js';
import { directorySizeBytes } from '../../eval/cache/directory-size.js';
import { COMPILE_CACHE_FOLDER } from '../../eval/process/worker-sandbox.js';
import { EXIT, resolveCliIo, type CliIo } from '../io/cli-io.js';

const optionsSchema = z.object({
  json: z.boolean().default(false),
  cacheDir: z.string().min(1, 'expected `--cache-dir` to name a folder, got an empty string').optional(),
  /** The old name of `--cache-dir`, still taken (with a notice). */
  cacheRoot: z.string().min(1, 'expected `--cache-root` to name a folder, got an empty string').optional(),
  only: z
    .enum(['builds', 'baselines', 'compile'], { error: (issue) => `expected \`--only\` to be builds, baselines or compile, got \`${String(issue.input)}\`` })
    .optional(),
});
type CacheOptions = z.infer<typeof optionsSchema>;

/** The baseline cache's files: one JSON file per key. */
interface BaselineStats {
  directory: string;
  entries: number;
  totalBytes: number;
}

/** The reference worker's torch.compile caches (Inductor's and Triton's, written by torch). */
interface CompileStats {
  directory: string;
  totalBytes: number;
}

/** Where the caches live: `--cache-dir` (or its old name `--cache-root`), else `$KFORGE_CACHE_DIR`, else `.kforge` in the working directory. */
function cacheFolders(options: CacheOptions, io: CliIo): { root: string; builds: string; baselines: string; compile: string } {
  const given = options.cacheDir ?? options.cacheRoot;
  const root = given ? path.resolve(io.cwd, given) : path.dirname(defaultBaselineCacheDirectory(io.environment, io.cwd));
  return { root, builds: path.join(root, 'builds'), baselines: path.join(root, 'baselines'), compile: path.join(root, COMPILE_CACHE_FOLDER) };
}

async function compileStats(directory: string): Promise<CompileStats> {
  return { directory, totalBytes: await directorySizeBytes(directory) };
}

async function baselineFiles(directory: string): Promise<string[]> {
  try {
    return (await readdir(directory)).filter((name) => /^[0-9a-f]{64}\.json$/.test(name)).map((name) => path.join(directory, name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

async function baselineStats(directory: string): Promise<BaselineStats> {
  const files = await baselineFiles(directory);
  const sizes = await Promise.all(
    files.map((file) =>
      stat(file).then(
        (info) => info.size,
        () => 0,
      ),
    ),
  );
  return { directory, entries: files.length, totalBytes: sizes.reduce((sum, size) => sum + size, 0) };
}

function renderStats(builds: BuildCacheStats, baselines: BaselineStats, compile: CompileStats, colors: ReturnType<typeof picocolors.createColors>): string {
  const lastUse = builds.newestUseAt ? `   last used ${builds.newestUseAt.slice(0, 16).replace('T', ' ')} UTC` : '';
  return `${[
    `${colors.bold('build cache')}  ${builds.directory}`,
    `  ${builds.entries} entries${builds.inUse > 0 ? ` (${builds.inUse} in use)` : ''}   ${formatBytes(builds.totalBytes)} of ${formatBytes(builds.maxBytes)}` +
      `   ${builds.uses} uses: ${builds.builds} builds, ${builds.hits} hits${lastUse}`,
    `${colors.bold('baselines')}    ${baselines.directory}`,
    `  ${baselines.entries} entries   ${formatBytes(baselines.totalBytes)}`,
    `${colors.bold('torch.compile')} ${compile.directory}`,
    `  ${formatBytes(compile.totalBytes)} (the reference's Inductor and Triton caches)`,
  ].join('\n')}\n`;
}

/**
 * Adds `kforge cache stats [--json]` and `kforge cache clear [--only builds|baselines|compile] [--json]`:
 * the content-addressed build cache (`<root>/builds`, bounded by KFORGE_BUILD_CACHE_MAX_GB,
 * least recently used entries evicted first), the baseline cache (`<root>/baselines`) and the
 * reference worker's torch.compile caches (`<root>/compile`). Builds an evaluation holds right now
 * are never removed.
 *
 * Longer than convention 4's 60 lines: it is one commander declaration, the subcommands and their flags in the order
 * `kforge cache --help` lists them, and splitting it would part a flag from its neighbours.
 */
export function registerCacheCommand(program: Command, overrides: Partial<CliIo> = {}): Command {
  const run = (rawOptions: unknown, work: (options: CacheOptions, io: CliIo) => Promise<void>): Promise<void> => {
    const io = resolveCliIo(overrides);
    const parsed = optionsSchema.safeParse(rawOptions);
    if (!parsed.success) {
      io.stderr.write(`kforge cache: ${parsed.error.issues[0]?.message ?? 'invalid options'}\n`);
      io.setExitCode(EXIT.usage);
      return Promise.resolve();
    }
    if (parsed.data.cacheRoot !== undefined)
      io.stderr.write('kforge cache: `--cache-root` is now `--cache-dir` (the name eval, optimize and worker use); the old name still works\n');
    return work(parsed.data, io).catch((error: unknown) => {
      if (!(error instanceof RangeError)) throw error;
      io.stderr.write(`kforge cache: ${error.message}\n`);
      io.setExitCode(EXIT.usage);
    });
  };
  const cache = program.command('cache').description(COMMAND_DESCRIPTIONS.cache);
  const rootHelp = 'the cache folder holding builds/, baselines/ and compile/ (default $KFORGE_CACHE_DIR or .kforge), as eval, optimize and worker take it';
  const deprecatedRoot = () => new Option('--cache-root <dir>', 'old name of --cache-dir').hideHelp();

  cache
    .command('stats')
    .description("entries, size, bound, builds and hits of the build cache; entries and size of the baselines; size of the reference's torch.compile caches")
    .option('--json', 'print one JSON object { root, builds, baselines, compile }')
    .option('--cache-dir <dir>', rootHelp)
    .addOption(deprecatedRoot())
    .action((rawOptions: unknown) =>
      run(rawOptions, async (options, io) => {
        const folders = cacheFolders(options, io);
        const builds = await new BuildCache({ directory: folders.builds, maxBytes: buildCacheMaxBytes(io.environment) }).stats();
        const baselines = await baselineStats(folders.baselines);
        const compile = await compileStats(folders.compile);
        io.stdout.write(
          options.json
            ? `${JSON.stringify({ root: folders.root, builds, baselines, compile })}\n`
            : renderStats(builds, baselines, compile, picocolors.createColors(io.color)),
        );
        io.setExitCode(EXIT.correct);
      }),
    );

  cache
    .command('clear')
    .description(
      "remove cached builds, baselines and the reference's torch.compile caches (builds in use by a running evaluation are kept; clear compile/ while no evaluation runs)",
    )
    .option('--only <which>', 'clear only `builds`, only `baselines` or only `compile`')
    .option('--json', 'print one JSON object { builds, baselines, compile } of what was removed')
    .option('--cache-dir <dir>', rootHelp)
    .addOption(deprecatedRoot())
    .action((rawOptions: unknown) =>
      run(rawOptions, async (options, io) => {
        const folders = cacheFolders(options, io);
        const builds = options.only === undefined || options.only === 'builds' ? await new BuildCache({ directory: folders.builds }).clear() : null;
        let baselines: { removed: number; freedBytes: number } | null = null;
        if (options.only === undefined || options.only === 'baselines') {
          const before = await baselineStats(folders.baselines);
          await Promise.all((await baselineFiles(folders.baselines)).map((file) => rm(file, { force: true })));
          baselines = { removed: before.entries, freedBytes: before.totalBytes };
        }
        let compile: { freedBytes: number } | null = null;
        if (options.only === undefined || options.only === 'compile') {
          const before = await compileStats(folders.compile);
          await rm(folders.compile, { recursive: true, force: true });
          compile = { freedBytes: before.totalBytes };
        }
        if (options.json) io.stdout.write(`${JSON.stringify({ builds, baselines, compile })}\n`);
        else {
          const lines: string[] = [];
          if (builds) {
            const kept = builds.skippedInUse > 0 ? ` (${builds.skippedInUse} in use, kept)` : '';
            lines.push(`removed ${builds.removed} builds, ${formatBytes(builds.freedBytes)}${kept} from ${folders.builds}`);
          }
          if (baselines) lines.push(`removed ${baselines.removed} baselines, ${formatBytes(baselines.freedBytes)} from ${folders.baselines}`);
          if (compile) lines.push(`removed torch.compile caches, ${formatBytes(compile.freedBytes)} from ${folders.compile}`);
          io.stdout.write(`${lines.join('\n')}\n`);
        }
        io.setExitCode(EXIT.correct);
      }),
    );
  return cache;
}
