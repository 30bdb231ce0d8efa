/**
 * JSON Schemas generated from the zod source. Kept out of the package index so that
 * runtime users of the types never load zod-to-json-schema.
 */
import type { ZodTypeAny } from 'zod';
import { zodToJsonSchema } from 'zod-to-json-schema';
import { feedbackV1Schema, reviewResultV1Schema, testResultV1Schema } from './feedback.js';
import { reflectionV1Schema, selfReportInputSchema } from './reflection.js';

export interface GeneratedSchema {
  /** File name under the repository's `schemas/` folder. */
  file: string;
  schema: Record<string, unknown>;
}

function generate(id: string, title: string, description: string, source: ZodTypeAny): GeneratedSchema {
  const body = zodToJsonSchema(source, { $refStrategy: 'none', target: 'jsonSchema7' }) as Record<string, unknown>;
  const { $schema, ...rest } = body;
  return {
    file: `${id}.schema.json`,
    schema: { $schema, $id: `https://forge-reflect.dev/schemas/${id}.schema.json`, title, description, ...rest },
  };
}

/** Every committed schema, in a fixed order. */
export function generateJsonSchemas(): GeneratedSchema[] {
  return [
    generate(
      'reflection.v1',
      'reflection.v1',
      'A forge-reflect sidecar: the agent self-report and the mechanical risk floor of one turn. Generated from packages/reflection-types; do not edit.',
      reflectionV1Schema,
    ),
    generate(
      'reflection-input.v1',
      'reflection-input.v1',
      'The self-report an agent leaves for the Stop hook. Generated from packages/reflection-types; do not edit.',
      selfReportInputSchema,
    ),
    generate(
      'review-result.v1',
      'review-result.v1',
      'A reviewer result read by `forge-reflect bounce --review`: findings and a decision. Generated from packages/reflection-types; do not edit.',
      reviewResultV1Schema,
    ),
    generate(
      'test-result.v1',
      'test-result.v1',
      'A test run read by `forge-reflect bounce --tests`: counts, analysed failures, passed test names. Generated from packages/reflection-types; do not edit.',
      testResultV1Schema,
    ),
    generate(
      'feedback.v1',
      'feedback.v1',
      'A feedback report read by `forge-reflect bounce --feedback`: verdict, issues, steering. Generated from packages/reflection-types; do not edit.',
      feedbackV1Schema,
    ),
  ];
}

/** The text a schema file holds: two-space JSON with a trailing newline. */
export function renderJsonSchema(generated: GeneratedSchema): string {
  return `${JSON.stringify(generated.schema, null, 2)}\n`;
}
