/**
 * Small static SVG charts for the self-contained HTML report: no script, no external font, text
 * escaped. Sizes are in CSS pixels.
 */

/** Text safe inside SVG or HTML. */
export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const FONT = 'font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12"';

/**
 * Round numbers for an axis from 0 to at least `max`. With `integers` (a count, such as candidates
 * evaluated) every tick is a whole number: the step is at least 1 and never 2.5 times a power of ten.
 */
export function ticks(max: number, count = 5, integers = false): number[] {
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw || 1));
  const factors = integers ? [1, 2, 5, 10] : [1, 2, 2.5, 5, 10];
  const found = factors.map((factor) => factor * magnitude).find((candidate) => candidate >= raw) ?? raw;
  const step = integers ? Math.max(1, Math.round(found)) : found;
  const values: number[] = [];
  for (let value = 0; value <= max + step * 0.001; value += step) values.push(Number(value.toPrecision(6)));
  if ((values.at(-1) ?? 0) < max) values.push(Number(((values.at(-1) ?? 0) + step).toPrecision(6)));
  return values;
}

export interface Bar {
  label: string;
  /** Null draws no bar and writes `note` instead. */
  value: number | null;
  color: string;
  note?: string;
}

/** Horizontal bars with a dashed reference line (1x: as fast as the baseline). */
export function barChartSvg(bars: readonly Bar[], options: { title: string; unit: string; reference?: number; width?: number }): string {
  const width = options.width ?? 720;
  const labelWidth = 210;
  const rowHeight = 22;
  const top = 34;
  const plotWidth = width - labelWidth - 70;
  const height = top + bars.length * rowHeight + 30;
  const axis = ticks(Math.max(options.reference ?? 0, ...bars.map((bar) => bar.value ?? 0), 0.001));
  const max = axis.at(-1) ?? 1;
  const x = (value: number): number => labelWidth + (value / max) * plotWidth;
  const parts = [`<text x="0" y="16" font-weight="600">${escapeXml(options.title)}</text>`];
  for (const value of axis) {
    parts.push(`<line x1="${x(value)}" y1="${top - 6}" x2="${x(value)}" y2="${height - 24}" stroke="#eaeef2"/>`);
    parts.push(`<text x="${x(value)}" y="${height - 8}" text-anchor="middle" fill="#57606a">${value}${escapeXml(options.unit)}</text>`);
  }
  bars.forEach((bar, index) => {
    const y = top + index * rowHeight;
    const label = bar.label.length > 30 ? `${bar.label.slice(0, 29)}…` : bar.label;
    parts.push(`<text x="${labelWidth - 8}" y="${y + 15}" text-anchor="end">${escapeXml(label)}</text>`);
    if (bar.value === null) {
      parts.push(`<text x="${labelWidth + 4}" y="${y + 15}" fill="#57606a">${escapeXml(bar.note ?? 'not measured')}</text>`);
      return;
    }
    parts.push(`<rect x="${labelWidth}" y="${y + 3}" width="${Math.max(1, x(bar.value) - labelWidth)}" height="${rowHeight - 7}" fill="${bar.color}" rx="2"/>`);
    parts.push(`<text x="${x(bar.value) + 4}" y="${y + 15}">${bar.value.toPrecision(3)}${escapeXml(options.unit)}</text>`);
  });
  if (options.reference !== undefined) {
    parts.push(`<line x1="${x(options.reference)}" y1="${top - 6}" x2="${x(options.reference)}" y2="${height - 24}" stroke="#24292f" stroke-dasharray="4 3"/>`);
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" role="img" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT}>${parts.join('')}</svg>`;
}

export interface Series {
  label: string;
  color: string;
  /** x, y; a null y leaves a gap (nothing correct yet). */
  points: ReadonlyArray<readonly [number, number | null]>;
}

/** Step lines (best so far) sharing one x axis, with a legend underneath. */
export function stepChartSvg(
  series: readonly Series[],
  options: { title: string; xLabel: string; yUnit: string; width?: number; xIntegers?: boolean },
): string {
  const width = options.width ?? 720;
  const left = 56;
  const top = 34;
  const plotWidth = width - left - 20;
  const plotHeight = 220;
  const legendRows = Math.ceil(series.length / 3);
  const height = top + plotHeight + 44 + legendRows * 18;
  const xs = series.flatMap((line) => line.points.map(([px]) => px));
  const ys = series.flatMap((line) => line.points.flatMap(([, py]) => (py === null ? [] : [py])));
  const xAxis = ticks(Math.max(1, ...xs), 5, options.xIntegers === true);
  const yAxis = ticks(Math.max(1, ...ys));
  const xMax = xAxis.at(-1) ?? 1;
  const yMax = yAxis.at(-1) ?? 1;
  const x = (value: number): number => left + (value / xMax) * plotWidth;
  const y = (value: number): number => top + plotHeight - (value / yMax) * plotHeight;
  const parts = [`<text x="0" y="16" font-weight="600">${escapeXml(options.title)}</text>`];
  for (const value of yAxis) {
    parts.push(`<line x1="${left}" y1="${y(value)}" x2="${left + plotWidth}" y2="${y(value)}" stroke="#eaeef2"/>`);
    parts.push(`<text x="${left - 6}" y="${y(value) + 4}" text-anchor="end" fill="#57606a">${value}${escapeXml(options.yUnit)}</text>`);
  }
  for (const value of xAxis) parts.push(`<text x="${x(value)}" y="${top + plotHeight + 16}" text-anchor="middle" fill="#57606a">${value}</text>`);
  parts.push(`<text x="${left + plotWidth / 2}" y="${top + plotHeight + 32}" text-anchor="middle" fill="#57606a">${escapeXml(options.xLabel)}</text>`);
  parts.push(`<line x1="${left}" y1="${y(1)}" x2="${left + plotWidth}" y2="${y(1)}" stroke="#24292f" stroke-dasharray="4 3"/>`);
  for (const line of series) {
    let path = '';
    let previous: number | null = null;
    for (const [px, py] of line.points) {
      if (py === null) continue;
      path += previous === null ? `M${x(px)},${y(py)}` : `H${x(px)}V${y(py)}`;
      previous = py;
    }
    if (path) parts.push(`<path d="${path}" fill="none" stroke="${line.color}" stroke-width="2"/>`);
    const last = line.points.findLast(([, py]) => py !== null);
    if (last) parts.push(`<circle cx="${x(last[0])}" cy="${y(last[1]!)}" r="3.5" fill="${line.color}"/>`);
  }
  series.forEach((line, index) => {
    const lx = left + (index % 3) * (plotWidth / 3);
    const ly = top + plotHeight + 50 + Math.floor(index / 3) * 18;
    parts.push(`<rect x="${lx}" y="${ly - 9}" width="12" height="4" fill="${line.color}"/><text x="${lx + 18}" y="${ly - 4}">${escapeXml(line.label)}</text>`);
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" role="img" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT}>${parts.join('')}</svg>`;
}

/** One horizontal bar split into coloured segments (verdict counts), with a legend of the non-zero ones. */
export function stackedBarSvg(
  rows: ReadonlyArray<{ label: string; segments: ReadonlyArray<{ label: string; value: number; color: string }> }>,
  options: { title: string; width?: number },
): string {
  const width = options.width ?? 720;
  const labelWidth = 90;
  const plotWidth = width - labelWidth - 10;
  const top = 30;
  const rowHeight = 26;
  const parts = [`<text x="0" y="16" font-weight="600">${escapeXml(options.title)}</text>`];
  const seen = new Map<string, string>();
  rows.forEach((row, index) => {
    const total = row.segments.reduce((sum, segment) => sum + segment.value, 0);
    const y = top + index * rowHeight;
    parts.push(`<text x="${labelWidth - 8}" y="${y + 16}" text-anchor="end">${escapeXml(row.label)}</text>`);
    let offset = labelWidth;
    for (const segment of row.segments) {
      if (segment.value === 0 || total === 0) continue;
      const segmentWidth = (segment.value / total) * plotWidth;
      seen.set(segment.label, segment.color);
      parts.push(
        `<rect x="${offset}" y="${y + 3}" width="${segmentWidth}" height="${rowHeight - 8}" fill="${segment.color}"><title>${escapeXml(`${segment.label}: ${segment.value}`)}</title></rect>`,
      );
      if (segmentWidth > 26) parts.push(`<text x="${offset + segmentWidth / 2}" y="${y + 16}" text-anchor="middle" fill="#fff">${segment.value}</text>`);
      offset += segmentWidth;
    }
  });
  const legendY = top + rows.length * rowHeight + 16;
  let legendX = labelWidth;
  for (const [label, color] of seen) {
    parts.push(
      `<rect x="${legendX}" y="${legendY - 10}" width="10" height="10" fill="${color}"/><text x="${legendX + 14}" y="${legendY - 1}">${escapeXml(label)}</text>`,
    );
    legendX += 24 + label.length * 7;
  }
  const height = legendY + 10;
  return `<svg xmlns="http://www.w3.org/2000/svg" role="img" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT}>${parts.join('')}</svg>`;
}
