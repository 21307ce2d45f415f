import type { z } from 'zod';
import type { editResponseSchema, resumeResponseSchema, stopResponseSchema } from './api-schemas/action-schemas.js';
import type { buildDetailsSchema, candidateDetailSchema, guardDetailsSchema, modelCallSchema } from './api-schemas/candidate-schemas.js';
import type { apiErrorSchema } from './api-schemas/common-schemas.js';
import type { candidateNodeSchema, problemViewSchema } from './api-schemas/problem-schemas.js';
import type { actionSchema, ideaSchema, runEventSchema } from './api-schemas/record-schemas.js';
import type { reportGroupSchema, reportProblemSchema, runComparisonSchema, runReportSchema } from './api-schemas/report-schemas.js';
import type { runDetailSchema, runListItemSchema, runListSchema, runProblemSchema } from './api-schemas/run-schemas.js';

/**
 * The API's response types, as the web app imports them (type-only, so no server code reaches
 * the browser bundle).
 */
export type ApiErrorResponse = z.infer<typeof apiErrorSchema>;
export type RunList = z.infer<typeof runListSchema>;
export type RunListItem = z.infer<typeof runListItemSchema>;
export type RunProblem = z.infer<typeof runProblemSchema>;
export type RunDetail = z.infer<typeof runDetailSchema>;
export type ProblemView = z.infer<typeof problemViewSchema>;
export type CandidateNode = z.infer<typeof candidateNodeSchema>;
export type CandidateDetail = z.infer<typeof candidateDetailSchema>;
export type ModelCallView = z.infer<typeof modelCallSchema>;
export type BuildDetailsView = z.infer<typeof buildDetailsSchema>;
export type GuardDetailsView = z.infer<typeof guardDetailsSchema>;
export type ActionView = z.infer<typeof actionSchema>;
export type IdeaView = z.infer<typeof ideaSchema>;
export type RunEventView = z.infer<typeof runEventSchema>;
export type StopResponse = z.infer<typeof stopResponseSchema>;
export type ResumeResponse = z.infer<typeof resumeResponseSchema>;
export type EditResponse = z.infer<typeof editResponseSchema>;
export type RunReport = z.infer<typeof runReportSchema>;
export type ReportProblemView = z.infer<typeof reportProblemSchema>;
export type ReportGroupView = z.infer<typeof reportGroupSchema>;
export type RunComparisonView = z.infer<typeof runComparisonSchema>;
