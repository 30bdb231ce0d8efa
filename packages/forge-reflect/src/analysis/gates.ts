/**
 * Which gate would have caught a failure signal. Pre-registered before any data was seen, in this
 * order (the first rule that holds wins; precedence CI > human review > self-reflection):
 *
 *   ci           the fixing commit (the fix, or the revert) touches tests, CI configuration or build
 *                files, or its message names a failing build or test;
 *   human_review the change it fixes (the reverted commit; the feature commits a fix follows) touched
 *                a surface the risk floor marks needs_review;
 *   self_reflection  everything else: only the author's own reflection could have caught it.
 */
import { evaluateRiskFloor } from '@forge-reflect/risk-floor';
import { namesFailingCheck } from './commit-message.js';

export type Gate = 'ci' | 'human_review' | 'self_reflection';
export const GATES: readonly Gate[] = ['ci', 'human_review', 'self_reflection'];

const TEST_PATHS = [
  /(^|\/)(tests?|__tests__|specs?|e2e|testing)\//i,
  /\.(test|spec)\.[^/]+$/i,
  /_test\.(go|py|rb|exs?)$/i,
  /(^|\/)test_[^/]+\.py$/i,
];
const CI_PATHS = [
  /^\.github\/workflows\//i, /(^|\/)\.gitlab-ci\.ya?ml$/i, /(^|\/)jenkinsfile$/i, /^\.circleci\//i, /^\.woodpecker/i,
  /^\.travis\.ya?ml$/i, /(^|\/)azure-pipelines\.ya?ml$/i, /^\.buildkite\//i,
];
const BUILD_PATHS = [
  /(^|\/)(package\.json|package-lock\.json|npm-shrinkwrap\.json|pnpm-lock\.yaml|pnpm-workspace\.yaml|yarn\.lock|makefile|gnumakefile|cmakelists\.txt|build\.gradle(\.kts)?|settings\.gradle(\.kts)?|pom\.xml|cargo\.toml|cargo\.lock|go\.mod|go\.sum|setup\.py|setup\.cfg|pyproject\.toml|dockerfile|build\.xml|build\.sh)$/i,
  /(^|\/)requirements[^/]*\.txt$/i,
  /(^|\/)tsconfig[^/]*\.json$/i,
  /\.config\.(js|cjs|mjs|ts)$/i,
];

/** The CI-gate kind of a path: tests, ci or build; null for anything else. */
export function ciPathKind(path: string): 'tests' | 'ci' | 'build' | null {
  const p = path.replace(/\\/g, '/');
  if (TEST_PATHS.some((re) => re.test(p))) return 'tests';
  if (CI_PATHS.some((re) => re.test(p))) return 'ci';
  if (BUILD_PATHS.some((re) => re.test(p))) return 'build';
  return null;
}

export interface GateInput {
  /** Files the fixing commit touched. */
  fixFiles: readonly string[];
  fixMessage: string;
  /** Files of the change it fixes (empty when unknown). */
  inducingFiles: readonly string[];
}

export interface GateResult {
  gate: Gate;
  rule: string;
}

export function classifyGate(input: GateInput): GateResult {
  for (const f of input.fixFiles) {
    const kind = ciPathKind(f);
    if (kind) return { gate: 'ci', rule: `the fix touches ${kind === 'tests' ? 'tests' : kind === 'ci' ? 'CI configuration' : 'build files'}: ${f}` };
  }
  if (namesFailingCheck(input.fixMessage)) return { gate: 'ci', rule: 'the message names a failing build or test' };
  if (input.inducingFiles.length > 0) {
    const floor = evaluateRiskFloor({ filesChanged: input.inducingFiles });
    if (floor.needs_review) return { gate: 'human_review', rule: `the fixed change needs review: ${floor.reason}` };
  }
  return { gate: 'self_reflection', rule: 'no test, CI or build file, no failing check named, no review surface' };
}
