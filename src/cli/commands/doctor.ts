import path from 'node:path';
import type { Command } from 'commander';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import picocolors from 'picocolors';
import { WORKER_DIRECTORY } from '../../core/repository-paths.js';
import { EXIT, resolveCliIo, type CliIo } from '../io/cli-io.js';
import { pythonExecutable } from '../io/python-executable.js';
import { DEBIAN_INSTALL_LINE, runDoctorChecks, type DoctorReport, type ToolRunner } from '../doctor/doctor-checks.js';

/** What `kforge doctor` needs beyond its io; tests replace the tool runner. */
export interface DoctorCommandDependencies extends Partial<CliIo> {
  run?: ToolRunner;
}

/**
 * Adds `kforge doctor [--json]`: checks Python, PyTorch, the compilers, the GPU and the worker,
 * says what installs each missing piece, reports which layers of the candidate's sandbox are in
 * force here, and exits 0 when the cpu backend can run.
 */
export function registerDoctorCommand(program: Command, dependencies: DoctorCommandDependencies = {}): Command {
  return program
    .command('doctor')
    .description(COMMAND_DESCRIPTIONS.doctor)
    .option('--json', 'print the findings as one JSON object')
    .action(async (options: { json?: boolean }) => {
      const io = resolveCliIo(dependencies);
      const environment = io.environment;
      const report = await runDoctorChecks({
        python: pythonExecutable(environment),
        workerDirectory: environment.KFORGE_WORKER_DIR ? path.resolve(io.cwd, environment.KFORGE_WORKER_DIR) : WORKER_DIRECTORY,
        run: dependencies.run,
        environment,
      });
      io.stdout.write(options.json ? `${JSON.stringify(report)}\n` : renderDoctor(report, picocolors.createColors(io.color)));
      io.setExitCode(report.backends.cpu ? EXIT.correct : EXIT.notCorrect);
    });
}

function renderDoctor(report: DoctorReport, colors: ReturnType<typeof picocolors.createColors>): string {
  const width = Math.max(...report.checks.map((check) => check.label.length));
  const lines = report.checks.map((check) => {
    const mark = check.ok ? colors.green('ok     ') : check.requiredFor.length === 0 ? colors.yellow('note   ') : colors.red('missing');
    const needed = !check.ok && check.requiredFor.length > 0 ? colors.dim(` (needed for ${check.requiredFor.join(', ')})`) : '';
    const fix = check.fix && !check.ok ? `\n${' '.repeat(width + 13)}${colors.cyan(`fix: ${check.fix}`)}` : '';
    return `  ${mark}  ${check.label.padEnd(width)}  ${check.detail}${needed}${fix}`;
  });
  const backends = (Object.entries(report.backends) as Array<[string, boolean]>)
    .map(([name, ok]) => (ok ? colors.green(`${name} ✓`) : colors.red(`${name} ✗`)))
    .join('  ');
  const footer = report.backends.cpu
    ? colors.green('the cpu backend can run here')
    : `${colors.red('the cpu backend cannot run here yet.')} On Debian or Ubuntu: ${DEBIAN_INSTALL_LINE}`;
  return `${colors.bold('kforge doctor')}\n${lines.join('\n')}\n\nbackends: ${backends}\n${footer}\n`;
}
