import type { Command } from 'commander';
import { COMMAND_DESCRIPTIONS, type CommandName } from './commands/command-descriptions.js';
import type { CommandRegistration } from './run-program.js';

/** Loads a command's module and gives its registration. */
type RegistrationLoader = () => Promise<CommandRegistration>;

/** Every command of `kforge`, in the order `kforge --help` lists them; a new command is one more entry. */
export const COMMAND_LOADERS: Record<CommandName, RegistrationLoader> = {
  eval: async () => (await import('./commands/eval.js')).registerEvalCommand,
  optimize: async () => (await import('./commands/optimize.js')).registerOptimizeCommand,
  runs: async () => {
    const { registerRunsCommand } = await import('./commands/runs.js');
    return (program) => registerRunsCommand(program);
  },
  report: async () => {
    const { registerReportCommand } = await import('./commands/report.js');
    return (program) => registerReportCommand(program);
  },
  export: async () => {
    const { registerExportCommand } = await import('./commands/export.js');
    return (program) => registerExportCommand(program);
  },
  problems: async () => {
    const { registerProblemsCommand } = await import('./commands/problems.js');
    return (program) => registerProblemsCommand(program);
  },
  serve: async () => {
    const { registerServeCommand } = await import('./commands/serve.js');
    return (program) => registerServeCommand(program);
  },
  worker: async () => (await import('./commands/worker.js')).registerWorkerCommand,
  workers: async () => (await import('./commands/workers.js')).registerWorkersCommand,
  cache: async () => (await import('./commands/cache.js')).registerCacheCommand,
  doctor: async () => (await import('./commands/doctor.js')).registerDoctorCommand,
};

const isCommandName = (text: string | undefined): text is CommandName => text !== undefined && Object.hasOwn(COMMAND_DESCRIPTIONS, text);

/**
 * The command `argv` runs (its first argument, or the one after `help`), or null for the
 * program's own help, version and misuse.
 */
export function commandNamed(argv: readonly string[]): CommandName | null {
  const first = argv[0] === 'help' ? argv[1] : argv[0];
  return isCommandName(first) ? first : null;
}

/** A command known by name and description only: enough for `kforge --help` and for suggestions. */
function listedOnly(name: CommandName): CommandRegistration {
  return (program: Command) => program.command(name).description(COMMAND_DESCRIPTIONS[name]);
}

/**
 * The registrations for one invocation: the named command's full registration (its module
 * loaded), every other command listed by name and description only.
 *
 * @example await runProgram(argv, await commandRegistrations(argv))
 */
export async function commandRegistrations(argv: readonly string[]): Promise<CommandRegistration[]> {
  const wanted = commandNamed(argv);
  const names = Object.keys(COMMAND_LOADERS) as CommandName[];
  return Promise.all(names.map((name) => (name === wanted ? COMMAND_LOADERS[name]() : listedOnly(name))));
}
