/**
 * Which gate would have caught a failure, judged on the change that introduced it. Pre-registered in
 * docs/analysis.md before any data was seen, in this order (the first rule that holds wins;
 * precedence CI > human review > self-reflection):
 *
 *   ci           the fix adds or changes a test (the defect is one a test detects), or its message
 *                names a failing build or test, or every file holding the defect (the blamed lines'
 *                files; for a revert, the reverted change's files) is CI configuration or a build file;
 *   human_review the introducing change (the blamed cause; the reverted commit) touched a surface the
 *                risk floor marks needs_review, the repository's own name removed from its paths first
 *                (`packages/vite/…` is not a build surface in vite);
 *   self_reflection  everything else: only the author's own reflection could have caught it.
 */
import { evaluateRiskFloor } from '@forge-reflect/risk-floor';
import { namesFailingCheck } from './commit-message.js';

export type Gate = 'ci' | 'human_review' | 'self_reflection';
export const GATES: readonly Gate[] = ['ci', 'human_review', 'self_reflection'];

const TEST_PATHS = [/(^|\/)(tests?|__tests__|specs?|e2e|testing)\//i, /\.(test|spec)\.[^/]+$/i, /_test\.(go|py|rb|exs?)$/i, /(^|\/)test_[^/]+\.py$/i];
const CI_PATHS = [
  /^\.github\/workflows\//i,
  /(^|\/)\.gitlab-ci\.ya?ml$/i,
  /(^|\/)jenkinsfile$/i,
  /^\.circleci\//i,
  /^\.woodpecker/i,
  /^\.travis\.ya?ml$/i,
  /(^|\/)azure-pipelines\.ya?ml$/i,
  /^\.buildkite\//i,
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
  /** Files of the change that introduced the defect (empty when unknown). */
  inducingFiles: readonly string[];
  /** Files holding the defect (the blamed lines' files); defaults to inducingFiles. */
  defectFiles?: readonly string[];
  /** The repository's name, removed from paths before the risk-floor match. */
  repoName?: string | null;
}

/** A path with the repository's own name blanked out, so `packages/vite/x.ts` is no build surface in vite. */
export function withoutRepoName(path: string, repoName: string | null | undefined): string {
  if (!repoName || repoName.length < 3) return path;
  const escaped = repoName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return path.replace(new RegExp(escaped, 'gi'), '_');
}

export interface GateResult {
  gate: Gate;
  rule: string;
}

export function classifyGate(input: GateInput): GateResult {
  const test = input.fixFiles.find((f) => ciPathKind(f) === 'tests');
  if (test) return { gate: 'ci', rule: `the fix adds or changes a test: ${test}` };
  if (namesFailingCheck(input.fixMessage)) return { gate: 'ci', rule: 'the message names a failing build or test' };
  const defect = input.defectFiles ?? input.inducingFiles;
  if (
    defect.length > 0 &&
    defect.every((f) => {
      const k = ciPathKind(f);
      return k === 'ci' || k === 'build';
    })
  ) {
    return { gate: 'ci', rule: `the defect sits in CI or build files: ${defect.slice(0, 3).join(', ')}` };
  }
  if (input.inducingFiles.length > 0) {
    const floor = evaluateRiskFloor({ filesChanged: input.inducingFiles.map((f) => withoutRepoName(f, input.repoName)) });
    if (floor.needs_review) return { gate: 'human_review', rule: `the introducing change needs review: ${floor.reason}` };
  }
  return {
    gate: 'self_reflection',
    rule: 'no test in the fix, no failing check named, defect outside CI/build files, no review surface in the introducing change',
  };
}
