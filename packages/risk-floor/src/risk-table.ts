/**
 * The review-surface table: the single source of truth for surfaces, path patterns, weights
 * and their order (PRD §6, plus the additions listed in this package's README).
 *
 * Patterns are matched case-insensitively against a normalised repo-relative path. They are
 * plain ASCII POSIX-ERE-compatible regexes, so the generated bash twin (hooks/lib/risk-table.sh)
 * can use them verbatim and give the same verdict byte for byte.
 */
import type { ReviewSurface } from '@forge-reflect/reflection-types';

export interface SurfaceRule {
  surface: Exclude<ReviewSurface, 'none'>;
  weight: number;
  patterns: readonly string[];
}

/** In table order: a file takes the first surface whose pattern matches. */
export const RISK_TABLE: readonly SurfaceRule[] = [
  {
    surface: 'auth',
    weight: 1.0,
    patterns: [
      'auth',
      'login',
      'session',
      'token',
      'permission',
      'rbac',
      'credential',
      'secret',
      '(^|/)\\.env($|\\.)',
      '\\.pem$',
      '\\.key$',
      'oauth',
      'jwt',
      'password',
      // Agent configuration: an agent changing its own instructions, permissions, hooks or tools.
      '(^|/)\\.claude/',
      '(^|/)\\.mcp\\.json$',
      '(^|/)\\.codex/',
      '(^|/)\\.gemini/',
      '(^|/)\\.cursor/',
      '(^|/)\\.cursorrules$',
      '(^|/)claude\\.md$',
      '(^|/)claude\\.local\\.md$',
      '(^|/)agents\\.md$',
      '(^|/)agents\\.override\\.md$',
      '(^|/)gemini\\.md$',
      '(^|/)\\.github/copilot-instructions\\.md$',
    ],
  },
  {
    surface: 'data',
    weight: 0.9,
    patterns: ['migration', 'prisma', 'schema', '\\.sql', 'entity', 'repository', 'seed'],
  },
  {
    surface: 'infra',
    weight: 0.85,
    patterns: [
      'docker',
      '\\.woodpecker',
      'compose',
      'traefik',
      'deploy',
      'helm',
      'k8s',
      'terraform',
      '\\.github/workflows/',
      '\\.gitlab-ci',
      'jenkinsfile',
      '\\.circleci/',
    ],
  },
  {
    surface: 'build',
    weight: 0.6,
    patterns: ['package\\.json', 'tsconfig', 'turbo\\.json', 'pnpm-', '\\.config\\.', 'eslint', 'vite'],
  },
  { surface: 'ui', weight: 0.4, patterns: ['\\.tsx', '\\.css', 'components/', 'apps/web/'] },
  { surface: 'test', weight: 0.2, patterns: ['\\.spec\\.', '\\.test\\.', '__tests__/'] },
  { surface: 'docs', weight: 0.1, patterns: ['\\.md', 'docs/'] },
];

/** The weight of a path no rule matches. */
export const NONE_WEIGHT = 0;
export const DEFAULT_THRESHOLD = 0.5;
/** How many tripping files `reason` names before it says "+N more". */
export const REASON_FILE_LIMIT = 3;
/**
 * The text form of a threshold (an environment variable, a flag): a decimal from 0 to 1.
 * At most six decimals, no signs, exponents or spaces: bash and TypeScript then read the same
 * texts as the same number and compare it exactly.
 */
export const THRESHOLD_TEXT_PATTERN = '^([01](\\.[0-9]{0,6})?|\\.[0-9]{1,6})$';
