import { API_KEY_VARIABLES } from './provider-presets.js';

/** What replaces a secret in redacted text. */
export const REDACTED = '[redacted]';

/** Secrets shorter than this are not replaced literally (they would match ordinary text). */
const MIN_SECRET_LENGTH = 6;

/** Names of environment variables whose values are treated as secrets. */
const SECRET_VARIABLE_NAME = /(?:API_KEY|APIKEY|_TOKEN|_SECRET|_PASSWORD)$/i;

/**
 * Shapes of well-known credentials, replaced even when the value is not known in advance: OpenAI
 * and OpenRouter (`sk-…`), Anthropic (`sk-ant-…`), Google (`AIza…`), bearer tokens, and keys in
 * query strings. Each pattern's first group (when present) is kept.
 */
const CREDENTIAL_PATTERNS: readonly RegExp[] = [
  /()\bsk-[A-Za-z0-9][A-Za-z0-9_-]{15,}/g,
  /()\bAIza[0-9A-Za-z_-]{30,}/g,
  /(\bBearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  /(\b(?:x-api-key|x-goog-api-key|api-key|authorization)["']?\s*[:=]\s*["']?)[^\s"',}]{8,}/gi,
  /([?&](?:key|api_key|apikey|access_token|token)=)[^&\s"'#]+/gi,
];

/**
 * Replaces every known secret, and anything shaped like a credential, with `[redacted]`.
 *
 * @param text Text that may contain secrets (an error message, a response body, a log line).
 * @param secrets Literal secret values to remove (API keys in use); values shorter than 6 characters are ignored.
 * @example redactSecrets('401: bad key sk-abc…', [apiKey])
 */
export function redactSecrets(text: string, secrets: Iterable<string> = []): string {
  let result = text;
  const literal = [...new Set(secrets)].filter((secret) => secret.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  for (const secret of literal) {
    result = result.split(secret).join(REDACTED);
  }
  for (const pattern of CREDENTIAL_PATTERNS) {
    result = result.replace(pattern, (_match, kept: string) => `${kept}${REDACTED}`);
  }
  return result;
}

/**
 * Redacts every string inside a JSON-like value (objects, arrays), for records and logs.
 * Values under keys named like credentials (`apiKey`, `authorization`, …) are replaced whole.
 */
export function redactDeep(value: unknown, secrets: Iterable<string> = []): unknown {
  const secretList = [...secrets];
  const walk = (item: unknown, key: string | undefined): unknown => {
    if (key !== undefined && isCredentialKey(key) && item != null && item !== '') return REDACTED;
    if (typeof item === 'string') return redactSecrets(item, secretList);
    if (Array.isArray(item)) return item.map((entry) => walk(entry, undefined));
    if (item !== null && typeof item === 'object') {
      return Object.fromEntries(Object.entries(item).map(([name, entry]) => [name, walk(entry, name)]));
    }
    return item;
  };
  return walk(value, undefined);
}

function isCredentialKey(key: string): boolean {
  return /^(?:api[-_]?key|authorization|x-api-key|x-goog-api-key|password|secret|token|access[-_]?token)$/i.test(key);
}

/**
 * The values of environment variables that hold secrets: every provider key variable, and any
 * variable whose name ends in `API_KEY`, `_TOKEN`, `_SECRET` or `_PASSWORD`.
 */
export function secretValuesFromEnvironment(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env)
    .filter(([name, value]) => value && isSecretVariable(name))
    .map(([, value]) => value as string);
}

function isSecretVariable(name: string): boolean {
  return API_KEY_VARIABLES.includes(name) || SECRET_VARIABLE_NAME.test(name);
}
