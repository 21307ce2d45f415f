import { z } from 'zod';

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
