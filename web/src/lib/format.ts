/** Number and time formats of the dashboard; `–` stands for "not measured". */

export const NONE = '–';

/**
 * A speedup to about the precision of the 3-digit times it divides, thousands abbreviated as
 * {@link count} does: `0.92×`, `14.2×`, `1251×`, `417k×`, `1.25M×`.
 */
export function speedup(value: number | null | undefined): string {
  if (value === null || value === undefined) return NONE;
  if (value >= 999_500) return `${(value / 1e6).toPrecision(3)}M×`;
  if (value >= 9999.5) return `${(value / 1e3).toPrecision(3)}k×`;
  if (value >= 100) return `${Math.round(value)}×`;
  return `${value < 10 ? value.toFixed(2) : value.toFixed(1)}×`;
}

export function share(value: number | null | undefined): string {
  if (value === null || value === undefined) return NONE;
  const percent = value * 100;
  return `${percent > 0 && percent < 10 ? percent.toFixed(1) : Math.round(percent)}%`;
}

/** Milliseconds with sensible digits: `0.518 ms`, `13.9 ms`, `1.21 s`. */
export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined) return NONE;
  if (value >= 1000) return `${(value / 1000).toPrecision(3)} s`;
  return `${value.toPrecision(3)} ms`;
}

export function count(value: number): string {
  if (value >= 1e6) return `${(value / 1e6).toFixed(1)}M`;
  if (value >= 1e4) return `${Math.round(value / 1e3)}k`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(1)}k`;
  return String(value);
}

export function cost(value: number | null | undefined): string {
  if (value === null || value === undefined) return NONE;
  return value > 0 && value < 0.01 ? `$${value.toPrecision(2)}` : `$${value.toFixed(2)}`;
}

export function seconds(value: number): string {
  if (value >= 7200) return `${(value / 3600).toFixed(1)} h`;
  if (value >= 120) return `${(value / 60).toFixed(1)} min`;
  return `${value.toFixed(1)} s`;
}

export function bytes(value: number | null | undefined): string {
  if (value === null || value === undefined) return NONE;
  if (value >= 1024 * 1024) return `${(value / 1024 / 1024).toFixed(1)} MiB`;
  if (value >= 1024) return `${(value / 1024).toFixed(1)} KiB`;
  return `${value} B`;
}

/** Scientific notation for errors: `3.9e+0`, `2.6e-6`, `0`. */
export function error(value: number | null | undefined): string {
  if (value === null || value === undefined) return NONE;
  return value === 0 ? '0' : value.toExponential(1);
}

/** `2026-03-02 09:40 UTC`. */
export function time(iso: string | null | undefined): string {
  if (!iso) return NONE;
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

/** `3 min ago`, `2 h ago`, `5 d ago`, from `now`. */
export function ago(iso: string, now = Date.now()): string {
  const minutes = Math.max(0, Math.round((now - Date.parse(iso)) / 60_000));
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  if (minutes < 48 * 60) return `${Math.round(minutes / 60)} h ago`;
  return `${Math.round(minutes / 1440)} d ago`;
}

/** Minutes between two times: `14 min`, `2.5 h`. */
export function duration(fromIso: string, toIso: string | null): string {
  const minutes = ((toIso ? Date.parse(toIso) : Date.now()) - Date.parse(fromIso)) / 60_000;
  return minutes >= 120 ? `${(minutes / 60).toFixed(1)} h` : `${Math.max(0, Math.round(minutes))} min`;
}

/** What a run's device time is called: `CPU time` on the cpu backend, `GPU time` on cuda and triton, else `device time`. */
export function deviceTimeLabel(backend: string | null | undefined): string {
  if (backend === 'cpu') return 'CPU time';
  if (backend === 'cuda' || backend === 'triton') return 'GPU time';
  return 'device time';
}
