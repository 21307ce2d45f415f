import type { ProviderName } from '../../core/config.js';

export { PROVIDER_NAMES, type ProviderName } from '../../core/config.js';

/** How a provider's requests are built; decides how reasoning effort is mapped. */
export type ProviderFamily = 'openai' | 'anthropic' | 'google' | 'openai-compatible';

/** Defaults of one provider: which API it speaks, where it lives, where its key comes from. */
export interface ProviderPreset {
  family: ProviderFamily | 'files';
  /** Base URL used when none is configured; absent where the SDK's own default applies or one is required. */
  defaultBaseUrl?: string;
  /** Environment variables read for the key, first one set wins. Empty for keyless providers. */
  apiKeyVariables: readonly string[];
  /** Whether a call without a key is refused before it is made. */
  apiKeyRequired: boolean;
  /** Whether `--base-url` must be given. */
  baseUrlRequired: boolean;
}

/**
 * Every provider's defaults. The local servers' URLs are their documented default ports on the
 * loopback interface; their keys are optional (set one when the server was started with `--api-key`).
 */
export const PROVIDER_PRESETS: Readonly<Record<ProviderName, ProviderPreset>> = {
  openai: { family: 'openai', apiKeyVariables: ['OPENAI_API_KEY'], apiKeyRequired: true, baseUrlRequired: false },
  anthropic: { family: 'anthropic', apiKeyVariables: ['ANTHROPIC_API_KEY'], apiKeyRequired: true, baseUrlRequired: false },
  google: {
    family: 'google',
    apiKeyVariables: ['GOOGLE_GENERATIVE_AI_API_KEY', 'GEMINI_API_KEY'],
    apiKeyRequired: true,
    baseUrlRequired: false,
  },
  'openai-compatible': {
    family: 'openai-compatible',
    apiKeyVariables: ['OPENAI_COMPATIBLE_API_KEY'],
    apiKeyRequired: false,
    baseUrlRequired: true,
  },
  vllm: {
    family: 'openai-compatible',
    defaultBaseUrl: 'http://127.0.0.1:8000/v1',
    apiKeyVariables: ['VLLM_API_KEY'],
    apiKeyRequired: false,
    baseUrlRequired: false,
  },
  sglang: {
    family: 'openai-compatible',
    defaultBaseUrl: 'http://127.0.0.1:30000/v1',
    apiKeyVariables: ['SGLANG_API_KEY'],
    apiKeyRequired: false,
    baseUrlRequired: false,
  },
  ollama: {
    family: 'openai-compatible',
    defaultBaseUrl: 'http://127.0.0.1:11434/v1',
    apiKeyVariables: ['OLLAMA_API_KEY'],
    apiKeyRequired: false,
    baseUrlRequired: false,
  },
  llamacpp: {
    family: 'openai-compatible',
    defaultBaseUrl: 'http://127.0.0.1:8080/v1',
    apiKeyVariables: ['LLAMACPP_API_KEY'],
    apiKeyRequired: false,
    baseUrlRequired: false,
  },
  deepseek: {
    family: 'openai-compatible',
    defaultBaseUrl: 'https://api.deepseek.com/v1',
    apiKeyVariables: ['DEEPSEEK_API_KEY'],
    apiKeyRequired: true,
    baseUrlRequired: false,
  },
  openrouter: {
    family: 'openai-compatible',
    defaultBaseUrl: 'https://openrouter.ai/api/v1',
    apiKeyVariables: ['OPENROUTER_API_KEY'],
    apiKeyRequired: true,
    baseUrlRequired: false,
  },
  files: { family: 'files', apiKeyVariables: [], apiKeyRequired: false, baseUrlRequired: false },
};

/** Every environment variable any provider reads a key from. */
export const API_KEY_VARIABLES: readonly string[] = [...new Set(Object.values(PROVIDER_PRESETS).flatMap((preset) => preset.apiKeyVariables))];
