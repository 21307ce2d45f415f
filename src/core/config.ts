import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import { jsonErrorLocation } from './json-error-location.js';
import { backendSchema, precisionSchema, toleranceProfileSchema } from './verdict.js';

/** The file `loadConfig()` looks for in the working directory when no path is given. */
export const CONFIG_FILE_NAME = 'kforge.config.json';

/** Providers a config may name. `files` replays a folder; the others are language-model APIs. */
export const PROVIDER_NAMES = [
  'openai',
  'anthropic',
  'google',
  'openai-compatible',
  'vllm',
  'sglang',
  'ollama',
  'llamacpp',
  'deepseek',
  'openrouter',
  'files',
] as const;
export const providerNameSchema = z.enum(PROVIDER_NAMES);
export type ProviderName = z.infer<typeof providerNameSchema>;

export const REASONING_EFFORTS = ['low', 'medium', 'high'] as const;
export const reasoningEffortSchema = z.enum(REASONING_EFFORTS);
/** How hard a reasoning model should think; each provider maps it to its own setting. */
export type ReasoningEffort = z.infer<typeof reasoningEffortSchema>;

/** Defaults of model calls, applied where neither the config nor a flag sets them. */
export const MODEL_CALL_DEFAULTS = { timeoutSeconds: 300, maxAttempts: 4 } as const;

export const modelPriceSchema = z.strictObject({
  inputUsdPerMillionTokens: z.number().nonnegative(),
  outputUsdPerMillionTokens: z.number().nonnegative(),
});

const modelFields = {
  /** Model id as the provider names it (`gpt-5`, `claude-sonnet-4-5`, `Qwen/Qwen3-32B`). */
  model: z.string().min(1).optional(),
  /** Base URL of the API (`http://127.0.0.1:8000/v1`); required for `openai-compatible`. */
  baseUrl: z.url({ protocol: /^https?$/ }).optional(),
  /** The API key itself. Prefer an environment variable: a config file is easily committed. */
  apiKey: z.string().min(1).optional(),
  /** Name of the environment variable to read the key from, instead of the provider's usual one. */
  apiKeyEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name')
    .optional(),
  /** Folder of candidate files, for the `files` provider. */
  dir: z.string().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxOutputTokens: z.int().positive().optional(),
  reasoningEffort: reasoningEffortSchema.optional(),
  /** Limit on one model call attempt, in seconds. */
  timeoutSeconds: z.number().positive().optional(),
  /** Attempts per model call, the first included. */
  maxAttempts: z.int().min(1).max(20).optional(),
  /** Price overrides by model id, USD per million tokens. */
  prices: z.record(z.string().min(1), modelPriceSchema).optional(),
};

/** What it takes to build one model: the model part of the config, with the provider known. */
export const modelSettingsSchema = z.strictObject({ provider: providerNameSchema, ...modelFields });
export type ModelSettings = z.infer<typeof modelSettingsSchema>;

export const evaluatorDefaultsSchema = z.strictObject({
  backend: backendSchema.optional(),
  precision: precisionSchema.optional(),
  tolerance: toleranceProfileSchema.optional(),
  trials: z.int().positive().optional(),
  perfTrials: z.int().positive().optional(),
});

export const budgetsSchema = z.strictObject({
  maxCandidates: z.int().positive().optional(),
  maxMinutes: z.number().positive().optional(),
  maxTokens: z.int().positive().optional(),
  maxCostUsd: z.number().positive().optional(),
  /** Stop once a correct candidate is this many times faster than the best baseline. */
  targetSpeedup: z.number().positive().optional(),
});

/** The whole `kforge.config.json`. Every key is optional; unknown keys are errors. */
export const kforgeConfigSchema = z.strictObject({
  /** Allowed so editors can point at a JSON schema. */
  $schema: z.string().optional(),
  provider: providerNameSchema.optional(),
  ...modelFields,
  /** Most model calls in flight at once, per provider. */
  concurrency: z.partialRecord(providerNameSchema, z.int().positive()).optional(),
  evaluator: evaluatorDefaultsSchema.optional(),
  budgets: budgetsSchema.optional(),
  strategy: z.strictObject({ name: z.string().min(1), options: z.record(z.string(), z.unknown()).optional() }).optional(),
  store: z.strictObject({ path: z.string().min(1) }).optional(),
  guard: z.strictObject({ policy: z.string().min(1) }).optional(),
});
export type KforgeConfig = z.infer<typeof kforgeConfigSchema>;

/** One problem found in a config, with the JSON path it is at (`budgets.maxCostUsd`). */
export interface ConfigIssue {
  path: string;
  message: string;
}

/**
 * A config file that cannot be used: unreadable, not JSON, or not matching the schema. The message
 * lists every problem with its JSON path and what was expected. It never contains `apiKey`.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly source: string;
  readonly issues: ConfigIssue[];

  constructor(message: string, context: { source: string; issues: ConfigIssue[]; cause?: unknown }) {
    super(message, { cause: context.cause });
    this.source = context.source;
    this.issues = context.issues;
  }
}

/** A loaded config and the file it came from (undefined when none was found). */
export interface LoadedConfig {
  config: KforgeConfig;
  path: string | undefined;
}

export interface LoadConfigOptions {
  /** Where to look for `kforge.config.json` when no path is given. Default: `process.cwd()`. */
  cwd?: string;
}

/**
 * Reads and validates a config. With a path, the file must exist. Without one, `kforge.config.json`
 * in `cwd` is used when present, and an empty config otherwise.
 *
 * @throws ConfigError naming the file, the JSON path of each problem and what was expected.
 */
export async function loadConfig(path?: string, options: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const file = resolve(options.cwd ?? process.cwd(), path ?? CONFIG_FILE_NAME);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (path === undefined && (error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { config: {}, path: undefined };
    }
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new ConfigError(`Cannot read the config file ${file} (${reason}).`, { source: file, issues: [], cause: error });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const where = jsonErrorLocation(text);
    throw new ConfigError(`The config file ${file} is not valid JSON${where}: ${(error as Error).message}`, {
      source: file,
      issues: [],
      cause: error,
    });
  }
  return { config: parseConfig(value, file), path: file };
}

/**
 * Validates a parsed config value.
 *
 * @param source Where the value came from, for messages (a file path).
 * @throws ConfigError listing every problem.
 */
export function parseConfig(value: unknown, source: string): KforgeConfig {
  const result = kforgeConfigSchema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    path: formatPath(issue.path),
    message: describeIssue(issue),
  }));
  const lines = issues.map((issue) => `  - at ${issue.path}: ${issue.message}`);
  throw new ConfigError(`Invalid config ${source}:\n${lines.join('\n')}\nSee docs/config.md.`, { source, issues });
}

/** A copy of the config fit for logs and records: the API key replaced. */
export function redactConfig(config: KforgeConfig): KforgeConfig {
  return config.apiKey === undefined ? { ...config } : { ...config, apiKey: '[redacted]' };
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(top level)';
  return path
    .map((part, index) => {
      if (typeof part === 'number') return `[${part}]`;
      const name = String(part);
      if (/^[A-Za-z_$][\w$]*$/.test(name)) return index === 0 ? name : `.${name}`;
      return `[${JSON.stringify(name)}]`;
    })
    .join('');
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const got = 'input' in issue ? `, got ${describeValue(issue.input, issue.path)}` : '';
  switch (issue.code) {
    case 'unrecognized_keys':
      return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}${got}`;
    case 'invalid_type':
      return `expected ${article(issue.expected)}${got}`;
    case 'too_small':
      return `expected ${issue.origin === 'string' ? 'a non-empty string' : `a number ${issue.inclusive ? '>=' : '>'} ${String(issue.minimum)}`}${got}`;
    case 'too_big':
      return `expected a number ${issue.inclusive ? '<=' : '<'} ${String(issue.maximum)}${got}`;
    case 'invalid_format':
      return `expected ${issue.format === 'url' ? 'an http(s) URL' : issue.message.toLowerCase()}${got}`;
    default:
      return `${issue.message}${got}`;
  }
}

function describeValue(value: unknown, path: readonly PropertyKey[]): string {
  if (path.at(-1) === 'apiKey') return 'a value (not shown)';
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function article(expected: string): string {
  const names: Record<string, string> = { int: 'an integer', object: 'an object', array: 'an array', number: 'a number' };
  return names[expected] ?? `a ${expected}`;
}
