import { Command, CommanderError } from 'commander';
import { EXIT, resolveCliIo, type CliIo } from './io/cli-io.js';

/** Adds one command (and its subcommands) to the program. */
export type CommandRegistration = (program: Command, io?: Partial<CliIo>) => Command;

/** Commander's error codes that are not misuse. */
const NOT_MISUSE = new Set(['commander.helpDisplayed', 'commander.version', 'commander.executeSubCommandAsync']);

/**
 * Builds the `kforge` program from its command registrations and runs it on `argv` (without the
 * node and script paths). Commander's own errors (unknown flag, missing argument) become one line
 * and exit status 2; an unexpected exception is kforge's fault: exit status 3. `--version` alone
 * prints what {@link findInstalledVersions} found (its module is loaded only then).
 *
 * @returns the exit status to use, unless a command already set one.
 */
export async function runProgram(
  argv: readonly string[],
  registrations: readonly CommandRegistration[],
  overrides: Partial<CliIo> = {},
): Promise<number | undefined> {
  const io = resolveCliIo(overrides);
  const program = new Command()
    .name('kforge')
    .description('AI models write GPU kernels; nothing they write is believed until it is proven.')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => void io.stdout.write(text),
      writeErr: (text) => void io.stderr.write(text),
      outputError: () => undefined,
    })
    .showSuggestionAfterError(true)
    .option('-V, --version', 'the versions of kforge, Node.js, Python, PyTorch and CUDA found on this machine');
  for (const register of registrations) register(program, io);
  try {
    if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
      const { findInstalledVersions, formatInstalledVersions } = await import('./doctor/installed-versions.js');
      io.stdout.write(formatInstalledVersions(await findInstalledVersions(io.environment)));
      return EXIT.correct;
    }
    await program.parseAsync([...argv], { from: 'user' });
    return undefined;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (NOT_MISUSE.has(error.code)) return error.exitCode;
      io.stderr.write(`${misuseLine(error, argv, program)}\n`);
      return EXIT.usage;
    }
    io.stderr.write(`kforge: internal error (please report it): ${describeFault(error, io)}\n`);
    return EXIT.internal;
  }
}

/** Commander's message as one line, with the command named and where to read its usage. */
function misuseLine(error: CommanderError, argv: readonly string[], program: Command): string {
  const names = new Set(program.commands.map((command) => command.name()));
  const command = argv.find((argument) => names.has(argument));
  const prefix = command ? `kforge ${command}` : 'kforge';
  const message = error.message
    .replace(/^error:\s*/, '')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\.$/, '')
    .replace(/\((Did you mean [^)]*)\)/, (_, suggestion: string) => `(${suggestion.toLowerCase()})`)
    .trim();
  if (error.code === 'commander.help' || message.length === 0) return `${prefix}: expected a command; run \`${prefix} --help\` to see them`;
  return `${prefix}: ${message}; run \`${prefix} --help\` for usage`;
}

/** A fault of kforge's: its stack for a log or with KFORGE_DEBUG=1, one line on a person's terminal. */
function describeFault(error: unknown, io: CliIo): string {
  if (!(error instanceof Error)) return String(error);
  const terminal = io.stderr === process.stderr && process.stderr.isTTY === true;
  if (terminal && !io.environment.KFORGE_DEBUG) return `${error.message} (run again with KFORGE_DEBUG=1 to see where)`;
  return error.stack ?? error.message;
}
