import { exitQuietlyWhenReaderCloses } from './io/closed-pipe.js';
import { commandRegistrations } from './command-catalog.js';
import { runProgram } from './run-program.js';

exitQuietlyWhenReaderCloses(process.stdout);
exitQuietlyWhenReaderCloses(process.stderr);
const argv = process.argv.slice(2);
const status = await runProgram(argv, await commandRegistrations(argv));
if (status !== undefined) process.exitCode = status;
