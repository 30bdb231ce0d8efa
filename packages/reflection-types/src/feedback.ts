/**
 * The inputs of the bounce loop (`forge-reflect bounce`): what a reviewer, a test run and a
 * feedback engine report about a task. Like reflection.v1 these zod schemas are the single source;
 * the committed JSON Schemas (schemas/review-result.v1, test-result.v1, feedback.v1) are generated
 * from them and drift-tested. Every object is strict and every field is snake_case.
 */
import { z } from 'zod';
import { confidenceSchema } from './reflection.js';

export const SEVERITIES = ['info', 'warning', 'error', 'critical'] as const;
export const FINDING_CATEGORIES = ['style', 'security', 'correctness', 'performance'] as const;
export const REVIEW_DECISIONS = ['approve', 'request_changes', 'require_human'] as const;
export const ROOT_CAUSE_TYPES = ['logic', 'syntax', 'runtime', 'flaky', 'env'] as const;
export const FEEDBACK_VERDICTS = ['complete', 'partial', 'incomplete', 'fail'] as const;

export const severitySchema = z.enum(SEVERITIES);
const lineSchema = z.number().int().min(1);
const countSchema = z.number().int().min(0);

export const suggestedFixSchema = z
  .object({
    description: z.string().min(1),
    diff: z.string().optional(),
  })
  .strict();

export const findingSchema = z
  .object({
    id: z.string().min(1),
    severity: severitySchema,
    category: z.enum(FINDING_CATEGORIES),
    message: z.string().min(1),
    file: z.string().min(1).optional(),
    line: lineSchema.optional(),
    confidence: confidenceSchema,
    fixable: z.boolean(),
    suggested_fix: suggestedFixSchema.optional(),
  })
  .strict();

/** review-result.v1: a reviewer's findings and decision on the current change. */
export const reviewResultV1Schema = z
  .object({
    findings: z.array(findingSchema),
    decision: z.enum(REVIEW_DECISIONS),
  })
  .strict();

export const rootCauseSchema = z
  .object({
    type: z.enum(ROOT_CAUSE_TYPES),
    description: z.string().min(1),
    file: z.string().min(1).optional(),
    line: lineSchema.optional(),
  })
  .strict();

export const testFailureSchema = z
  .object({
    test_name: z.string().min(1),
    error: z.string(),
    root_cause: rootCauseSchema,
    confidence: confidenceSchema,
    suggested_fix: suggestedFixSchema.optional(),
  })
  .strict();

/**
 * test-result.v1: one test run. `passed_tests` names the tests that passed; the bounce loop keeps
 * them per task so that a test that passed before and fails now is seen as a regression.
 */
export const testResultV1Schema = z
  .object({
    summary: z
      .object({
        total: countSchema,
        passed: countSchema,
        failed: countSchema,
        skipped: countSchema,
      })
      .strict(),
    failures: z.array(testFailureSchema),
    passed_tests: z.array(z.string().min(1)).optional(),
  })
  .strict();

export const feedbackIssueSchema = z
  .object({
    id: z.string().min(1),
    type: z.string().min(1),
    severity: severitySchema,
    message: z.string().min(1),
    evidence: z.string().optional(),
  })
  .strict();

export const steeringItemSchema = z
  .object({
    id: z.string().min(1),
    type: z.string().min(1),
    description: z.string().min(1),
    /** Only a safe item is ever offered to the agent as something to apply. */
    safe: z.boolean(),
    patch: z.string().optional(),
    command: z.string().optional(),
  })
  .strict();

/** feedback.v1: a per-iteration feedback report (verdict, issues, steering). */
export const feedbackV1Schema = z
  .object({
    verdict: z.enum(FEEDBACK_VERDICTS),
    confidence: confidenceSchema,
    rationale: z.string(),
    issues: z.array(feedbackIssueSchema),
    steering: z.array(steeringItemSchema),
  })
  .strict();

export type Severity = z.infer<typeof severitySchema>;
export type Finding = z.infer<typeof findingSchema>;
export type ReviewResultV1 = z.infer<typeof reviewResultV1Schema>;
export type TestFailure = z.infer<typeof testFailureSchema>;
export type TestResultV1 = z.infer<typeof testResultV1Schema>;
export type FeedbackIssue = z.infer<typeof feedbackIssueSchema>;
export type SteeringItem = z.infer<typeof steeringItemSchema>;
export type FeedbackV1 = z.infer<typeof feedbackV1Schema>;
