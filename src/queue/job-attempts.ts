import type { Redis } from 'ioredis';
import { jobAttemptSchema, type JobAttempt } from './evaluation-job-messages.js';

/** How long a job's attempt list is kept after its last change, in ms (a day past the kept results). */
export const JOB_ATTEMPTS_TTL_MS = 8 * 24 * 3600 * 1000;

/**
 * Unless the list already holds ARGV[1] entries, appends the attempt of ARGV[2] numbered after
 * them; returns {the appended entry or 0, the entries before}.
 */
const START_SCRIPT = `
local before = redis.call('LRANGE', KEYS[1], 0, -1)
if #before >= tonumber(ARGV[1]) then
  return {0, before}
end
local attempt = cjson.decode(ARGV[2])
attempt['attempt'] = #before + 1
local entry = cjson.encode(attempt)
redis.call('RPUSH', KEYS[1], entry)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {entry, before}`;

function parseAttempts(entries: readonly string[]): JobAttempt[] {
  return entries.flatMap((entry) => {
    try {
      const parsed = jobAttemptSchema.safeParse(JSON.parse(entry));
      return parsed.success ? [parsed.data] : [];
    } catch {
      return [];
    }
  });
}

/** A recorded start: the attempt and its entry in the Redis list (to take it back). */
export interface StartedAttempt {
  attempt: JobAttempt;
  entry: string;
}

/**
 * Records one more start of a job, atomically, unless it was started `maxAttempts` times
 * already (each earlier start lost its worker: a finished attempt ends the job).
 *
 * @returns `started` null when the bound is reached; `previous`, the attempts recorded before.
 */
export async function startJobAttempt(
  redis: Redis,
  key: string,
  maxAttempts: number,
  attempt: Omit<JobAttempt, 'attempt'>,
): Promise<{ started: StartedAttempt | null; previous: JobAttempt[] }> {
  const reply = (await redis.eval(START_SCRIPT, 1, key, String(maxAttempts), JSON.stringify({ ...attempt, attempt: 0 }), String(JOB_ATTEMPTS_TTL_MS))) as [
    string | number,
    string[],
  ];
  const [entry, before] = reply;
  const parsed = typeof entry === 'string' ? parseAttempts([entry])[0] : undefined;
  return { started: parsed && typeof entry === 'string' ? { attempt: parsed, entry } : null, previous: parseAttempts(before) };
}

/** Takes a start back (the worker returned the job to the queue unfinished): it does not count. */
export async function forgetJobAttempt(redis: Redis, key: string, started: StartedAttempt): Promise<void> {
  await redis.lrem(key, 1, started.entry);
}

/** The starts of a job so far, oldest first. */
export async function readJobAttempts(redis: Redis, key: string): Promise<JobAttempt[]> {
  return parseAttempts(await redis.lrange(key, 0, -1));
}
