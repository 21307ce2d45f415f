import { z } from 'zod';
import type { RunReportData } from '../api-schemas/report-schemas.js';
import { renderCsvReport } from './csv-report.js';
import { renderHtmlReport } from './html-report.js';
import { renderMarkdownReport } from './markdown-report.js';
import { REPORT_FORMATS } from './report-formats.js';

export { REPORT_FORMATS } from './report-formats.js';

export const reportFormatSchema = z.enum(REPORT_FORMATS);
export type ReportFormat = z.infer<typeof reportFormatSchema>;

export interface RenderedReport {
  text: string;
  contentType: string;
  /** File name extension, without the dot. */
  extension: string;
}

const CONTENT_TYPES: Record<ReportFormat, string> = {
  md: 'text/markdown; charset=utf-8',
  html: 'text/html; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

/** The report in one of {@link REPORT_FORMATS}. */
export function renderReport(report: RunReportData, format: ReportFormat): RenderedReport {
  const text =
    format === 'md'
      ? renderMarkdownReport(report)
      : format === 'html'
        ? renderHtmlReport(report)
        : format === 'csv'
          ? renderCsvReport(report)
          : `${JSON.stringify(report, null, 2)}\n`;
  return { text, contentType: CONTENT_TYPES[format], extension: format };
}
