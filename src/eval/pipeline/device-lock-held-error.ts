/** The context of a {@link DeviceLockHeldError}. */
export interface DeviceLockHeldContext {
  host: string;
  device: string;
  /** The Redis key of the lock. */
  lockKey: string;
  /** The worker id holding it (null when it was freed meanwhile). */
  holder: string | null;
  /** Milliseconds until the lock expires unless its holder renews it. */
  expiresInMs: number | null;
}

/**
 * Another worker owns a device this worker was asked to use (`--gpus`): two workers never time
 * on one GPU. A worker killed without releasing its locks frees them when they expire.
 */
export class DeviceLockHeldError extends Error {
  override readonly name = 'DeviceLockHeldError';
  readonly context: DeviceLockHeldContext;

  constructor(context: DeviceLockHeldContext) {
    const expires =
      context.expiresInMs !== null && context.expiresInMs > 0
        ? `; the lock expires in ${(context.expiresInMs / 1000).toFixed(1)} s unless that worker renews it`
        : '';
    super(
      `device ${context.device} of host ${context.host} is owned by worker ${context.holder ?? '(unknown)'} (Redis key ${context.lockKey})${expires}: give this worker other devices with --gpus, or stop that worker`,
    );
    this.context = context;
  }
}
