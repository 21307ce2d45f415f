import { z } from 'zod';
import { GUARD_POLICIES, resolveGuardPolicy, type GuardPolicyName } from '../../core/guard-policy.js';
import { closestName } from './closest-name.js';

/**
 * Parsers of command-line flag values (commander hands over strings), each failing with a message
 * that names the flag and what was given.
 */

/** An integer of at least `minimum` (1 unless told). */
export const integerFlag = (flag: string, minimum: 0 | 1 = 1) =>
  z.string().transform((text, context) => {
    const value = Number(text);
    if (!/^\+?\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < minimum) {
      context.addIssue({ code: 'custom', message: `expected \`${flag}\` to be ${minimum === 1 ? 'a positive' : 'a non-negative'} integer, got \`${text}\`` });
      return z.NEVER;
    }
    return value;
  });

/** A decimal number as a person writes one: `2`, `+2`, `2.5`, `.5` (no minus sign, exponent or hex). */
const DECIMAL = /^\+?(\d+\.?\d*|\.\d+)$/;

/** A finite decimal number of at least `minimum` (0 or above it); `unit` ends the message. */
const numberFlag = (flag: string, minimum: 'positive' | 'non-negative', unit?: string) =>
  z.string().transform((text, context) => {
    const value = Number(text);
    if (!DECIMAL.test(text.trim()) || !Number.isFinite(value) || (minimum === 'positive' && value === 0)) {
      context.addIssue({ code: 'custom', message: `expected \`${flag}\` to be a ${minimum} number${unit ? ` of ${unit}` : ''}, got \`${text}\`` });
      return z.NEVER;
    }
    return value;
  });

/** A finite number of at least zero; `unit` ends the message (`milliseconds`). */
export const nonNegativeNumberFlag = (flag: string, unit?: string) => numberFlag(flag, 'non-negative', unit);

/** A finite number above zero; `unit` ends the message (`seconds`). */
export const positiveNumberFlag = (flag: string, unit?: string) => numberFlag(flag, 'positive', unit);

/** The message of a choice flag's bad value, with the closest valid value when one is close. */
function choiceMessage(flag: string, values: readonly string[], text: string): string {
  const near = closestName(text, values);
  return `expected \`${flag}\` to be one of ${values.join(', ')}, got \`${text}\`${near ? ` (did you mean ${flag} ${near}?)` : ''}`;
}

/**
 * One of `values`; anything else fails naming the choices and, for a typo, the value meant.
 *
 * @example choiceFlag('--provider', PROVIDER_NAMES) // `fle` → "… got `fle` (did you mean --provider files?)"
 */
export const choiceFlag = <const T extends readonly string[]>(flag: string, values: T) =>
  z.string().transform((text, context) => {
    if (!values.includes(text)) {
      context.addIssue({ code: 'custom', message: choiceMessage(flag, values, text) });
      return z.NEVER;
    }
    return text as T[number];
  });

/** A shipped guard policy's name or an alias (`default`), resolved; anything else fails as {@link choiceFlag} does. */
export const guardPolicyFlag = (flag: string) =>
  z.string().transform((text, context): GuardPolicyName => {
    const resolved = resolveGuardPolicy(text);
    if (resolved === undefined) {
      context.addIssue({ code: 'custom', message: choiceMessage(flag, GUARD_POLICIES, text) });
      return z.NEVER;
    }
    return resolved;
  });
