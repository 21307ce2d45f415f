/**
 * The limits a run gets when its request names none, apart from the plan builder so that
 * `kforge optimize --help` shows them without loading it.
 */

/** Candidates per problem when no limit at all is given, so a run always ends. */
export const DEFAULT_MAX_CANDIDATES = 10;
/** Candidates without a better one before a problem counts as stalled. */
export const DEFAULT_STALL_AFTER = 5;
