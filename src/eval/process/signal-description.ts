/** Plain words for the signals a crashing worker dies of. */
const DESCRIPTIONS: Partial<Record<NodeJS.Signals, string>> = {
  SIGSEGV: 'a segmentation fault (SIGSEGV), an out-of-bounds or invalid memory access in native code',
  SIGBUS: 'a bus error (SIGBUS), a misaligned or unmapped memory access in native code',
  SIGABRT: 'an abort (SIGABRT), a failed assertion or std::terminate in native code',
  SIGFPE: 'an arithmetic exception (SIGFPE), such as an integer division by zero',
  SIGILL: 'an illegal instruction (SIGILL), code built for another CPU or GPU architecture',
  SIGKILL: 'SIGKILL, possibly from the kernel because the machine ran out of memory',
  SIGTERM: 'SIGTERM, sent by something outside kforge',
  SIGPIPE: 'SIGPIPE, a write to a closed pipe',
};

/** Describes the signal a process died of, e.g. "a segmentation fault (SIGSEGV), …". */
export function describeSignal(signal: NodeJS.Signals): string {
  return DESCRIPTIONS[signal] ?? `the signal ${signal}`;
}
