/** A job was submitted to a {@link JobQueue} that is closed (or closing). */
export class JobQueueClosedError extends Error {
  override readonly name = 'JobQueueClosedError';

  constructor() {
    super('the job queue is closed: it accepts no more jobs');
  }
}
