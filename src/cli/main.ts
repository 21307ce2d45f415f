import { commandRegistrations } from './command-catalog.js';
import { runProgram } from './run-program.js';

const argv = process.argv.slice(2);
const status = await runProgram(argv, await commandRegistrations(argv));
if (status !== undefined) process.exitCode = status;
