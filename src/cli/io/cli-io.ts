/** Something text is written to (process.stdout, process.stderr, or a test's buffer). */
export interface TextSink {
  write(text: string): unknown;
}

/** The outside world of a command; tests replace any part. */
export interface CliIo {
  stdout: TextSink;
  stderr: TextSink;
  /** Default: sets `process.exitCode`. */
  setExitCode: (code: number) => void;
  environment: NodeJS.ProcessEnv;
  /** Directory relative paths are taken from. */
  cwd: string;
  /** Colour the output for a terminal. */
  color: boolean;
}

/** Fills in the process's own streams, environment and working directory. */
export function resolveCliIo(overrides: Partial<CliIo> = {}): CliIo {
  const environment = overrides.environment ?? process.env;
  return {
    stdout: overrides.stdout ?? process.stdout,
    stderr: overrides.stderr ?? process.stderr,
    setExitCode:
      overrides.setExitCode ??
      ((code) => {
        process.exitCode = code;
      }),
    environment,
    cwd: overrides.cwd ?? process.cwd(),
    color: overrides.color ?? (process.stdout.isTTY === true && !environment.NO_COLOR),
  };
}

/** Exit statuses of kforge (docs/spec.md section 6, plus 3 for kforge's own faults and 130 for Ctrl-C). */
export const EXIT = { correct: 0, notCorrect: 1, usage: 2, internal: 3, cancelled: 130 } as const;
