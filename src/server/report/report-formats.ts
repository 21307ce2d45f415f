/**
 * The formats of a run's report (`kforge report --format`, the dashboard's download). Apart from
 * their renderers (report-format.ts) so that `kforge report --help` lists them without loading them.
 */
export const REPORT_FORMATS = ['md', 'html', 'csv', 'json'] as const;
