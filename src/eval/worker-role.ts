import { z } from 'zod';

/** The two worker processes of an evaluation (docs/worker-protocol.md). */
export const WORKER_ROLES = ['reference', 'candidate'] as const;
export const workerRoleSchema = z.enum(WORKER_ROLES);
export type WorkerRole = z.infer<typeof workerRoleSchema>;
