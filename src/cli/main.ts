import { registerCacheCommand } from './commands/cache.js';
import { registerDoctorCommand } from './commands/doctor.js';
import { registerEvalCommand } from './commands/eval.js';
import { registerExportCommand } from './commands/export.js';
import { registerOptimizeCommand } from './commands/optimize.js';
import { registerProblemsCommand } from './commands/problems.js';
import { registerReportCommand } from './commands/report.js';
import { registerRunsCommand } from './commands/runs.js';
import { registerServeCommand } from './commands/serve.js';
import { registerWorkerCommand } from './commands/worker.js';
import { registerWorkersCommand } from './commands/workers.js';
import { runProgram, type CommandRegistration } from './run-program.js';

/** Every command of `kforge`. A new command is one more registration here. */
const COMMANDS: readonly CommandRegistration[] = [
  registerEvalCommand,
  registerOptimizeCommand,
  (program) => registerRunsCommand(program),
  (program) => registerReportCommand(program),
  (program) => registerExportCommand(program),
  (program) => registerProblemsCommand(program),
  (program) => registerServeCommand(program),
  registerWorkerCommand,
  registerWorkersCommand,
  registerCacheCommand,
  registerDoctorCommand,
];

const status = await runProgram(process.argv.slice(2), COMMANDS);
if (status !== undefined) process.exitCode = status;
