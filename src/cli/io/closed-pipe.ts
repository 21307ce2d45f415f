/** A stream whose reader may go away: process.stdout piped into `head`. */
interface WritableWithErrors {
  on(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
}

/**
 * Ends the process quietly (status 0) when the reader of `stream` closed it (`kforge export … |
 * head -2`): the reader chose to stop, so that is no failure, and there is nobody left to tell.
 * Any other write error is rethrown, as before.
 */
export function exitQuietlyWhenReaderCloses(stream: WritableWithErrors, exit: (code: number) => void = process.exit): void {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') return exit(0);
    throw error;
  });
}
