import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { MODEL_CALL_DEFAULTS, PROVIDER_NAMES, type ModelSettings } from '../../core/config.js';
import type { SleepFunction } from './ai-sdk-kernel-model.js';
import { AiSdkKernelModel, type SdkLanguageModel } from './ai-sdk-kernel-model.js';
import { FilesKernelModel } from './files-kernel-model.js';
import type { FailedAttempt, KernelModel, ModelDescription } from '../kernel-model.js';
import { ModelConfigurationError } from '../model-configuration-error.js';
import { createPriceTable } from '../usage/price-table.js';
import { PROVIDER_PRESETS, type ProviderName, type ProviderPreset } from './provider-presets.js';

/** What `createKernelModel` takes from outside besides the settings. */
export interface CreateKernelModelDependencies {
  /** Where keys are read from. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Replaces the global fetch for HTTP providers (tests, proxies). */
  fetch?: typeof globalThis.fetch;
  /** Injected for tests. */
  sleep?: SleepFunction;
  random?: () => number;
  now?: () => number;
  onAttemptFailed?: (attempt: FailedAttempt, model: ModelDescription) => void;
}

/**
 * Builds the `KernelModel` the settings describe (the model part of `kforge.config.json` with
 * command-line flags applied on top).
 *
 * - `openai` (OPENAI_API_KEY, the responses API), `anthropic` (ANTHROPIC_API_KEY), `google`
 *   (GOOGLE_GENERATIVE_AI_API_KEY or GEMINI_API_KEY);
 * - `openai-compatible` at `baseUrl` (required; key optional: OPENAI_COMPATIBLE_API_KEY), and the
 *   presets `vllm`, `sglang`, `ollama`, `llamacpp`, `deepseek` (DEEPSEEK_API_KEY) and `openrouter`
 *   (OPENROUTER_API_KEY) with their usual base URLs;
 * - `files`: the folder `dir`, replayed.
 *
 * `apiKey` in the settings wins over the environment; `apiKeyEnv` names another variable.
 *
 * @throws ModelConfigurationError naming the flag or variable to set; never containing a key.
 * @example await createKernelModel({ provider: 'vllm', model: 'Qwen/Qwen3-32B' })
 */
export async function createKernelModel(settings: ModelSettings, dependencies: CreateKernelModelDependencies = {}): Promise<KernelModel> {
  const name = settings.provider;
  const preset = PROVIDER_PRESETS[name] as ProviderPreset | undefined;
  if (preset === undefined) {
    throw new ModelConfigurationError(`Unknown provider "${String(name)}"; expected one of ${PROVIDER_NAMES.join(', ')}.`, {
      provider: String(name),
      setting: '--provider',
    });
  }
  if (preset.family === 'files') {
    if (!settings.dir) {
      throw new ModelConfigurationError('The files provider needs a folder: pass --dir DIR (or "dir" in the config).', {
        provider: name,
        setting: '--dir',
      });
    }
    return FilesKernelModel.fromDirectory(settings.dir, {
      ...(settings.model ? { modelId: settings.model } : {}),
      ...(dependencies.now ? { now: dependencies.now } : {}),
    });
  }
  const modelId = settings.model;
  if (!modelId) {
    throw new ModelConfigurationError(`The ${name} provider needs a model id: pass --model ID (or "model" in the config).`, {
      provider: name,
      setting: '--model',
    });
  }
  const apiKey = resolveApiKey(name, preset, settings, dependencies.env ?? process.env);
  const baseUrl = resolveBaseUrl(name, preset, settings.baseUrl);
  const model = sdkModel(name, preset.family, modelId, apiKey, baseUrl, dependencies.fetch);
  return new AiSdkKernelModel({
    model,
    family: preset.family,
    provider: name,
    modelId,
    defaults: {
      ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
      ...(settings.maxOutputTokens === undefined ? {} : { maxOutputTokens: settings.maxOutputTokens }),
      ...(settings.reasoningEffort === undefined ? {} : { reasoningEffort: settings.reasoningEffort }),
    },
    timeoutSeconds: settings.timeoutSeconds ?? MODEL_CALL_DEFAULTS.timeoutSeconds,
    maxAttempts: settings.maxAttempts ?? MODEL_CALL_DEFAULTS.maxAttempts,
    prices: createPriceTable(settings.prices),
    secrets: apiKey === undefined ? [] : [apiKey],
    ...(dependencies.sleep ? { sleep: dependencies.sleep } : {}),
    ...(dependencies.random ? { random: dependencies.random } : {}),
    ...(dependencies.now ? { now: dependencies.now } : {}),
    ...(dependencies.onAttemptFailed ? { onAttemptFailed: dependencies.onAttemptFailed } : {}),
  });
}

/**
 * The key to use: `apiKey` from the settings, else the variable `apiKeyEnv` names, else the
 * provider's usual variables in order. A provider that needs a key and has none is refused with
 * the variable to set.
 */
export function resolveApiKey(
  name: ProviderName,
  preset: ProviderPreset,
  settings: Pick<ModelSettings, 'apiKey' | 'apiKeyEnv'>,
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (settings.apiKey) return settings.apiKey;
  const variables = settings.apiKeyEnv ? [settings.apiKeyEnv] : preset.apiKeyVariables;
  for (const variable of variables) {
    const value = env[variable]?.trim();
    if (value) return value;
  }
  if (preset.apiKeyRequired || settings.apiKeyEnv) {
    const which = variables.join(' or ');
    throw new ModelConfigurationError(`The ${name} provider needs an API key: set ${which} in the environment (or "apiKey" in kforge.config.json).`, {
      provider: name,
      setting: variables[0] ?? 'apiKey',
    });
  }
  return undefined;
}

function resolveBaseUrl(name: ProviderName, preset: ProviderPreset, configured: string | undefined): string | undefined {
  const baseUrl = configured ?? preset.defaultBaseUrl;
  if (baseUrl === undefined) {
    if (preset.baseUrlRequired) {
      throw new ModelConfigurationError(`The ${name} provider needs the server's address: pass --base-url URL (e.g. http://127.0.0.1:8000/v1).`, {
        provider: name,
        setting: '--base-url',
      });
    }
    return undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch (error) {
    throw new ModelConfigurationError(`--base-url must be an http(s) URL, got "${baseUrl}".`, {
      provider: name,
      setting: '--base-url',
      cause: error,
    });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ModelConfigurationError(`--base-url must be an http(s) URL, got "${baseUrl}".`, {
      provider: name,
      setting: '--base-url',
    });
  }
  return baseUrl.replace(/\/+$/, '');
}

function sdkModel(
  name: ProviderName,
  family: ProviderPreset['family'],
  modelId: string,
  apiKey: string | undefined,
  baseURL: string | undefined,
  fetch: typeof globalThis.fetch | undefined,
): SdkLanguageModel {
  const common = { ...(baseURL ? { baseURL } : {}), ...(fetch ? { fetch } : {}) };
  switch (family) {
    case 'openai':
      return createOpenAI({ apiKey, ...common }).responses(modelId);
    case 'anthropic':
      return createAnthropic({ apiKey, ...common })(modelId);
    case 'google':
      return createGoogleGenerativeAI({ apiKey, ...common })(modelId);
    default:
      return createOpenAICompatible({
        name,
        baseURL: baseURL as string,
        ...(apiKey ? { apiKey } : {}),
        includeUsage: true,
        ...(fetch ? { fetch } : {}),
      }).chatModel(modelId);
  }
}
