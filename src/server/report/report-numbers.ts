/** How the text reports write numbers; `-` stands for "not measured" everywhere. */

export const DASH = '-';

/** `1.84x`; three significant figures below 10, two decimals above. */
export function formatSpeedup(value: number | null): string {
  if (value === null) return DASH;
  return `${value < 10 ? value.toPrecision(3) : value.toFixed(1)}x`;
}

/** A share in [0, 1] as a percentage: `42%`, `7.5%`. */
export function formatShare(value: number | null): string {
  if (value === null) return DASH;
  const percent = value * 100;
  return `${percent !== 0 && Math.abs(percent) < 10 ? percent.toFixed(1) : Math.round(percent)}%`;
}

/** Milliseconds with four significant figures: `0.1234 ms`. */
export function formatMs(value: number | null): string {
  return value === null ? DASH : `${value.toPrecision(4)} ms`;
}

/** US dollars: `$1.27`, `$0.0042` for small amounts. */
export function formatCost(value: number | null): string {
  if (value === null) return DASH;
  return value !== 0 && value < 0.01 ? `$${value.toPrecision(2)}` : `$${value.toFixed(2)}`;
}

/** 1234567 → `1.2M`, 1234 → `1.2k`. */
export function formatCount(value: number): string {
  if (value >= 1e6) return `${(value / 1e6).toFixed(1)}M`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(1)}k`;
  return String(value);
}

/** Seconds of device time: `12.3 s`, `4.1 min`, `2.0 h`. */
export function formatSeconds(value: number): string {
  if (value >= 7200) return `${(value / 3600).toFixed(1)} h`;
  if (value >= 120) return `${(value / 60).toFixed(1)} min`;
  return `${value.toFixed(1)} s`;
}
