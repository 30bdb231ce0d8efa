import { describe, expect, it } from 'vitest';
import {
  DEFAULT_THRESHOLD,
  NONE_WEIGHT,
  REASON_FILE_LIMIT,
  RISK_TABLE,
  RiskThresholdError,
  classifyPath,
  evaluateRiskFloor,
  normalizeRepoPath,
  parseThresholdText,
} from '@forge-reflect/risk-floor';
import { REVIEW_SURFACES } from '@forge-reflect/reflection-types';
import { mulberry32 } from '../../../tests/support/random.js';

function shuffled<T>(items: readonly T[], rand: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** PRD §6, in its order, with its weights. */
const PRD_WEIGHTS: ReadonlyArray<[string, number]> = [
  ['auth', 1.0],
  ['data', 0.9],
  ['infra', 0.85],
  ['build', 0.6],
  ['ui', 0.4],
  ['test', 0.2],
  ['docs', 0.1],
];

/** PRD §6 patterns (dots of package.json / turbo.json escaped, the one documented deviation). */
const PRD_PATTERNS: Record<string, readonly string[]> = {
  auth: ['auth', 'login', 'session', 'token', 'permission', 'rbac', 'credential', 'secret'],
  data: ['migration', 'prisma', 'schema', '\\.sql', 'entity', 'repository', 'seed'],
  infra: ['docker', '\\.woodpecker', 'compose', 'traefik', 'deploy', 'helm', 'k8s', 'terraform'],
  build: ['package\\.json', 'tsconfig', 'turbo\\.json', 'pnpm-', '\\.config\\.', 'eslint', 'vite'],
  ui: ['\\.tsx', '\\.css', 'components/', 'apps/web/'],
  test: ['\\.spec\\.', '\\.test\\.', '__tests__/'],
  docs: ['\\.md', 'docs/'],
};

/** One realistic path per pattern of RISK_TABLE, keyed `surface pattern`. */
const PATTERN_EXAMPLES: Record<string, string> = {
  'auth auth': 'src/auth/guard.ts',
  'auth login': 'src/pages/login.ts',
  'auth session': 'lib/session-store.js',
  'auth token': 'src/token.go',
  'auth permission': 'api/permissions.py',
  'auth rbac': 'policy/rbac.yaml',
  'auth credential': 'src/credentials.rs',
  'auth secret': 'lib/secret-box.ts',
  'auth (^|/)\\.env($|\\.)': '.env',
  'auth \\.pem$': 'certs/server.pem',
  'auth \\.key$': 'certs/server.key',
  'auth oauth': 'src/oauth/callback.ts',
  'auth jwt': 'lib/jwt.ts',
  'auth password': 'ui/reset-password.tsx',
  'auth (^|/)\\.claude/': '.claude/settings.json',
  'auth (^|/)\\.mcp\\.json$': '.mcp.json',
  'auth (^|/)\\.codex/': '.codex/hooks.json',
  'auth (^|/)\\.gemini/': '.gemini/settings.json',
  'auth (^|/)\\.cursor/': '.cursor/rules/style.mdc',
  'auth (^|/)\\.cursorrules$': '.cursorrules',
  'auth (^|/)claude\\.md$': 'CLAUDE.md',
  'auth (^|/)claude\\.local\\.md$': 'CLAUDE.local.md',
  'auth (^|/)agents\\.md$': 'AGENTS.md',
  'auth (^|/)agents\\.override\\.md$': 'AGENTS.override.md',
  'auth (^|/)gemini\\.md$': 'GEMINI.md',
  'auth (^|/)\\.github/copilot-instructions\\.md$': '.github/copilot-instructions.md',
  'data migration': 'db/migrations/001_init.ts',
  'data prisma': 'lib/prisma.ts',
  'data schema': 'src/schema.graphql',
  'data \\.sql': 'db/query.sql',
  'data entity': 'src/user.entity.ts',
  'data repository': 'src/user.repository.ts',
  'data seed': 'db/seed.ts',
  'infra docker': 'Dockerfile',
  'infra \\.woodpecker': '.woodpecker.yml',
  'infra compose': 'compose.yaml',
  'infra traefik': 'traefik/dynamic.yml',
  'infra deploy': 'scripts/deploy.sh',
  'infra helm': 'helm/values.yaml',
  'infra k8s': 'k8s/pod.yaml',
  'infra terraform': 'terraform/main.tf',
  'infra \\.github/workflows/': '.github/workflows/ci.yml',
  'infra \\.gitlab-ci': '.gitlab-ci.yml',
  'infra jenkinsfile': 'Jenkinsfile',
  'infra \\.circleci/': '.circleci/config.yml',
  'build package\\.json': 'package.json',
  'build tsconfig': 'tsconfig.json',
  'build turbo\\.json': 'turbo.json',
  'build pnpm-': 'pnpm-lock.yaml',
  'build \\.config\\.': 'jest.config.js',
  'build eslint': '.eslintrc.cjs',
  'build vite': 'src/vite-env.d.ts',
  'ui \\.tsx': 'src/Button.tsx',
  'ui \\.css': 'styles/main.css',
  'ui components/': 'src/components/Button.vue',
  'ui apps/web/': 'apps/web/index.html',
  'test \\.spec\\.': 'src/x.spec.ts',
  'test \\.test\\.': 'src/x.test.ts',
  'test __tests__/': 'src/__tests__/x.ts',
  'docs \\.md': 'README.md',
  'docs docs/': 'docs/guide.txt',
};

const REVIEW_AT_DEFAULT: Record<string, boolean> = {
  auth: true,
  data: true,
  infra: true,
  build: true,
  ui: false,
  test: false,
  docs: false,
};

describe('RISK_TABLE', () => {
  it('has the PRD surfaces, in PRD order, with PRD weights', () => {
    expect(RISK_TABLE.map((r) => [r.surface, r.weight])).toEqual(PRD_WEIGHTS);
    const surfaces = new Set<string>(RISK_TABLE.map((r) => r.surface));
    expect([...REVIEW_SURFACES].filter((s) => !surfaces.has(s))).toEqual(['none']);
    expect(NONE_WEIGHT).toBe(0);
    expect(DEFAULT_THRESHOLD).toBe(0.5);
    expect(REASON_FILE_LIMIT).toBe(3);
  });

  it('keeps every PRD pattern under its PRD surface', () => {
    for (const rule of RISK_TABLE) {
      const prd = PRD_PATTERNS[rule.surface] ?? [];
      expect(
        prd.filter((p) => !rule.patterns.includes(p)),
        rule.surface,
      ).toEqual([]);
    }
  });

  it('has an example path below for every pattern (so the per-pattern test covers the whole table)', () => {
    const keys = RISK_TABLE.flatMap((r) => r.patterns.map((p) => `${r.surface} ${p}`));
    expect(keys.filter((k) => !(k in PATTERN_EXAMPLES))).toEqual([]);
    expect(Object.keys(PATTERN_EXAMPLES).filter((k) => !keys.includes(k))).toEqual([]);
  });
});

describe('agent configuration is an auth surface', () => {
  // An agent editing its own instructions, permissions, hooks or tools needs a human.
  const AGENT_CONFIG = [
    '.claude/settings.json',
    '.claude/settings.local.json',
    '.claude/hooks/reflect-stop-hook.sh',
    '.claude/commands/reflect.md',
    '.claude/agents/reviewer.md',
    '.claude/skills/x/SKILL.md',
    'sub/.claude/settings.json',
    '.CLAUDE\\settings.json',
    './.claude/x',
    '.mcp.json',
    'services/api/.mcp.json',
    '.codex/hooks.json',
    '.codex/config.toml',
    '.gemini/settings.json',
    'pkg/.gemini/settings.json',
    '.cursor/rules/style.mdc',
    '.cursor/mcp.json',
    '.cursorrules',
    'CLAUDE.md',
    'sub/CLAUDE.md',
    'Claude.md',
    'CLAUDE.local.md',
    'AGENTS.md',
    'services/api/AGENTS.md',
    'AGENTS.override.md',
    'GEMINI.md',
    'docs/GEMINI.md',
    '.github/copilot-instructions.md',
  ];
  it.each(AGENT_CONFIG)('%s is auth (1.0) and needs review', (path) => {
    expect(classifyPath(path)).toEqual({ surface: 'auth', weight: 1 });
    expect(evaluateRiskFloor({ filesChanged: [path] }).needs_review).toBe(true);
  });

  it.each([
    ['docs/notclaude.md', 'docs'],
    ['my.claude/notes.txt', 'none'],
    ['.claudeignore', 'none'],
    ['.gemini-old/x.txt', 'none'],
    ['src/agents.md.ts', 'docs'],
    ['.forge/spool/x.event', 'none'],
    ['.github/workflows/ci.yml', 'infra'],
  ])('%s is not agent configuration (%s)', (path, surface) => {
    expect(classifyPath(path).surface).toBe(surface);
  });

  it('a change to .claude/settings.json next to a README needs review, naming the settings file', () => {
    const verdict = evaluateRiskFloor({ filesChanged: ['README.md', '.claude/settings.json'] });
    expect(verdict).toMatchObject({ surface: 'auth', score: 1, needs_review: true });
    expect(verdict.reason).toContain('.claude/settings.json');
  });
});

describe('classifyPath', () => {
  for (const rule of RISK_TABLE) {
    for (const pattern of rule.patterns) {
      const path = PATTERN_EXAMPLES[`${rule.surface} ${pattern}`] ?? '';
      it(`${rule.surface} /${pattern}/: ${JSON.stringify(path)}`, () => {
        expect(path).not.toBe('');
        expect(new RegExp(pattern, 'i').test(normalizeRepoPath(path))).toBe(true);
        expect(classifyPath(path)).toEqual({ surface: rule.surface, weight: rule.weight });
      });
    }
  }

  it('holds every pattern to lowercase letters (an ASCII path is lowercased and matched case-sensitively)', () => {
    for (const rule of RISK_TABLE) {
      for (const pattern of rule.patterns) expect(pattern.replace(/\\./g, ''), pattern).toBe(pattern.replace(/\\./g, '').toLowerCase());
    }
  });

  it('classifies any case and any script as the case-insensitive patterns do, first rule first', () => {
    const reference = (path: string) => {
      const rule = RISK_TABLE.find((r) => r.patterns.some((p) => new RegExp(p, 'i').test(normalizeRepoPath(path))));
      return rule ? { surface: rule.surface, weight: rule.weight } : { surface: 'none', weight: 0 };
    };
    const paths = [
      'SRC/AUTH/Token.ts',
      'Src/Components/Button.TSX',
      'DB/Migrations/001.SQL',
      'Dockerfile',
      'DEPLOY/Helm/values.YAML',
      'Package.JSON',
      'Docs/Guide.MD',
      '.ENV.local',
      'Keys/Server.PEM',
      '.Claude/settings.json',
      'AGENTS.md',
      'a\\B\\Login.ts',
      // Outside ASCII: the Kelvin sign lowercases to k, the dotted I to i and a dot; neither may make a match the patterns do not.
      'certs/server.\u212Aey',
      'src/\u0130ndex.ts',
      'docs/r\u00e9sum\u00e9.md',
      'src/\u00c4uth/x.ts',
      'src/AUTH/\u00fcber.ts',
      'README',
    ];
    for (const path of paths) expect(classifyPath(path), path).toEqual(reference(path));
    expect(classifyPath('certs/server.\u212Aey').surface).toBe('none');
  });

  it('takes the first surface in table order, not the most specific-looking one', () => {
    expect(classifyPath('docs/auth.md')).toEqual({ surface: 'auth', weight: 1 });
    expect(classifyPath('docs/schema.md')).toEqual({ surface: 'data', weight: 0.9 });
    expect(classifyPath('src/components/LoginForm.tsx')).toEqual({ surface: 'auth', weight: 1 });
    expect(classifyPath('test/deploy.test.ts')).toEqual({ surface: 'infra', weight: 0.85 });
    expect(classifyPath('apps/web/vite.config.ts')).toEqual({ surface: 'build', weight: 0.6 });
    expect(classifyPath('src/__tests__/Button.tsx')).toEqual({ surface: 'ui', weight: 0.4 });
    expect(classifyPath('docs/x.spec.ts')).toEqual({ surface: 'test', weight: 0.2 });
  });

  it('matches case-insensitively', () => {
    expect(classifyPath('SRC/AUTH/X.TS')).toEqual({ surface: 'auth', weight: 1 });
    expect(classifyPath('DockerFile')).toEqual({ surface: 'infra', weight: 0.85 });
    expect(classifyPath('PACKAGE.JSON')).toEqual({ surface: 'build', weight: 0.6 });
    expect(classifyPath('Src/Button.TSX')).toEqual({ surface: 'ui', weight: 0.4 });
    expect(classifyPath('README.MD')).toEqual({ surface: 'docs', weight: 0.1 });
    expect(classifyPath('.ENV.Local')).toEqual({ surface: 'auth', weight: 1 });
  });

  it('reads backslashes as slashes and ignores leading ./', () => {
    expect(classifyPath('C:\\repo\\Auth\\x.ts')).toEqual({ surface: 'auth', weight: 1 });
    expect(classifyPath('src\\components\\x.vue')).toEqual({ surface: 'ui', weight: 0.4 });
    expect(classifyPath('.github\\workflows\\ci.yml')).toEqual({ surface: 'infra', weight: 0.85 });
    expect(classifyPath('config\\.env')).toEqual({ surface: 'auth', weight: 1 });
    expect(classifyPath('./src/x')).toEqual({ surface: 'none', weight: 0 });
    expect(classifyPath('./.env')).toEqual({ surface: 'auth', weight: 1 });
    expect(classifyPath('.\\.env')).toEqual({ surface: 'auth', weight: 1 });
  });

  it('classifies the .env family as auth, anchored on a path segment', () => {
    for (const p of ['.env', '.env.local', 'config/.env.production', 'a/b/.env', '.env.', 'x\\.env.test']) {
      expect(classifyPath(p), p).toEqual({ surface: 'auth', weight: 1 });
    }
    // Not a .env file: the pattern needs `.env` at a segment start, then the end or a dot.
    const envPattern = '(^|/)\\.env($|\\.)';
    for (const p of ['environment.ts', 'src/environment.ts', '.envrc', 'x.env', 'dev.environment', 'env']) {
      expect(new RegExp(envPattern, 'i').test(normalizeRepoPath(p)), p).toBe(false);
    }
    // And nothing else in the table matches them either.
    expect(classifyPath('environment.ts')).toEqual({ surface: 'none', weight: 0 });
    expect(classifyPath('src/environment.ts')).toEqual({ surface: 'none', weight: 0 });
    expect(classifyPath('.envrc')).toEqual({ surface: 'none', weight: 0 });
    expect(classifyPath('x.env')).toEqual({ surface: 'none', weight: 0 });
  });

  it('anchors .pem and .key at the end of the path', () => {
    expect(classifyPath('x.pem.bak')).toEqual({ surface: 'none', weight: 0 });
    expect(classifyPath('a.keys')).toEqual({ surface: 'none', weight: 0 });
    expect(classifyPath('keys/a.KEY')).toEqual({ surface: 'auth', weight: 1 });
  });

  it('gives none/0 to a path nothing matches', () => {
    for (const p of ['src/index.ts', 'Makefile', 'LICENSE', '', 'a/b/c.py', 'package-json']) {
      expect(classifyPath(p), p).toEqual({ surface: 'none', weight: 0 });
    }
  });
});

describe('normalizeRepoPath', () => {
  it('turns backslashes into slashes and drops every leading ./', () => {
    expect(normalizeRepoPath('C:\\repo\\Auth\\x.ts')).toBe('C:/repo/Auth/x.ts');
    expect(normalizeRepoPath('./src/x')).toBe('src/x');
    expect(normalizeRepoPath('././src/x')).toBe('src/x');
    expect(normalizeRepoPath('.\\src\\x')).toBe('src/x');
    expect(normalizeRepoPath('.//x')).toBe('/x');
    expect(normalizeRepoPath('../x')).toBe('../x');
    expect(normalizeRepoPath('src/./x')).toBe('src/./x');
    expect(normalizeRepoPath('.env')).toBe('.env');
    expect(normalizeRepoPath('')).toBe('');
  });
});

describe('evaluateRiskFloor', () => {
  for (const rule of RISK_TABLE) {
    const path = PATTERN_EXAMPLES[`${rule.surface} ${rule.patterns[0] ?? ''}`] ?? '';
    const review = REVIEW_AT_DEFAULT[rule.surface];
    it(`${rule.surface} (${rule.weight}) → needs_review ${String(review)} at the default threshold`, () => {
      const v = evaluateRiskFloor({ filesChanged: [path] });
      expect(v.surface).toBe(rule.surface);
      expect(v.score).toBe(rule.weight);
      expect(v.needs_review).toBe(review);
    });
  }

  it('gives none/0/false for a change that trips nothing', () => {
    expect(evaluateRiskFloor({ filesChanged: ['src/index.ts', 'Makefile'] })).toEqual({
      needs_review: false,
      score: 0,
      surface: 'none',
      reason: 'no risky surface in 2 file(s)',
    });
  });

  it('gives none/0/false with reason "no files changed" for an empty change, whatever the threshold', () => {
    const expected = { needs_review: false, score: 0, surface: 'none', reason: 'no files changed' };
    expect(evaluateRiskFloor({ filesChanged: [] })).toEqual(expected);
    expect(evaluateRiskFloor({ filesChanged: [], insertions: 10, deletions: 3 })).toEqual(expected);
    expect(evaluateRiskFloor({ filesChanged: [] }, { threshold: 0 })).toEqual(expected);
  });

  it('takes the highest weight over all files, wherever it is in the list', () => {
    const files = ['README.md', 'src/x.test.ts', 'src/Button.tsx', 'package.json', 'Dockerfile', 'db/seed.ts'];
    expect(evaluateRiskFloor({ filesChanged: files })).toMatchObject({ surface: 'data', score: 0.9 });
    expect(evaluateRiskFloor({ filesChanged: [...files, 'src/auth.ts'] })).toMatchObject({
      surface: 'auth',
      score: 1,
    });
    expect(evaluateRiskFloor({ filesChanged: ['src/auth.ts', ...files] })).toMatchObject({
      surface: 'auth',
      score: 1,
    });
    expect(evaluateRiskFloor({ filesChanged: ['README.md', 'src/x.test.ts'] })).toMatchObject({
      surface: 'test',
      score: 0.2,
      needs_review: false,
    });
  });

  it('names the surface, weight, tripping files and verdict in reason', () => {
    expect(evaluateRiskFloor({ filesChanged: ['README.md', 'src/auth.ts', 'Dockerfile'] }).reason).toBe(
      'auth surface (weight 1) in 1 file(s): src/auth.ts; review required at threshold 0.5',
    );
    expect(evaluateRiskFloor({ filesChanged: ['a.md', 'src/index.ts', 'b.md'] }).reason).toBe(
      'docs surface (weight 0.1) in 2 file(s): a.md, b.md; below review threshold 0.5',
    );
    expect(evaluateRiskFloor({ filesChanged: ['Dockerfile'] }, { threshold: 0.85 }).reason).toBe(
      'infra surface (weight 0.85) in 1 file(s): Dockerfile; review required at threshold 0.85',
    );
  });

  it('lists three tripping files, then (+N more), in input order', () => {
    const three = ['a/auth.ts', 'b/token.ts', 'c/login.ts'];
    expect(evaluateRiskFloor({ filesChanged: three }).reason).toBe(
      'auth surface (weight 1) in 3 file(s): a/auth.ts, b/token.ts, c/login.ts; review required at threshold 0.5',
    );
    const five = [...three, 'README.md', 'd/session.ts', 'e/secret'];
    expect(evaluateRiskFloor({ filesChanged: five }).reason).toBe(
      'auth surface (weight 1) in 5 file(s): a/auth.ts, b/token.ts, c/login.ts (+2 more); review required at threshold 0.5',
    );
    const many = Array.from({ length: 12 }, (_, i) => `docs/page-${i}.txt`);
    expect(evaluateRiskFloor({ filesChanged: many }).reason).toBe(
      'docs surface (weight 0.1) in 12 file(s): docs/page-0.txt, docs/page-1.txt, docs/page-2.txt (+9 more); below review threshold 0.5',
    );
  });

  it('drops the lower-surface files it had collected when a higher surface appears', () => {
    const v = evaluateRiskFloor({ filesChanged: ['a.md', 'b.md', 'c.md', 'd.md', 'x.sql', 'e.md', 'y.sql'] });
    expect(v.reason).toBe('data surface (weight 0.9) in 2 file(s): x.sql, y.sql; review required at threshold 0.5');
  });

  it('reports the original spelling of a path, not its normalised form', () => {
    expect(evaluateRiskFloor({ filesChanged: ['.\\Src\\Auth\\X.ts'] }).reason).toBe(
      'auth surface (weight 1) in 1 file(s): .\\Src\\Auth\\X.ts; review required at threshold 0.5',
    );
  });

  describe('threshold', () => {
    it('needs review when score equals the threshold (>=), not just above it', () => {
      expect(evaluateRiskFloor({ filesChanged: ['package.json'] }, { threshold: 0.6 }).needs_review).toBe(true);
      expect(evaluateRiskFloor({ filesChanged: ['package.json'] }, { threshold: 0.600001 }).needs_review).toBe(false);
      expect(evaluateRiskFloor({ filesChanged: ['Dockerfile'] }, { threshold: 0.85 }).needs_review).toBe(true);
      expect(evaluateRiskFloor({ filesChanged: ['Dockerfile'] }, { threshold: 0.850001 }).needs_review).toBe(false);
      expect(evaluateRiskFloor({ filesChanged: ['src/x.tsx'] }, { threshold: 0.4 }).needs_review).toBe(true);
      expect(evaluateRiskFloor({ filesChanged: ['src/x.tsx'] }, { threshold: 0.41 }).needs_review).toBe(false);
    });

    it('at threshold 0 every non-empty change needs review, even one that trips nothing', () => {
      expect(evaluateRiskFloor({ filesChanged: ['src/index.ts'] }, { threshold: 0 })).toEqual({
        needs_review: true,
        score: 0,
        surface: 'none',
        reason: 'no risky surface in 1 file(s); review required at threshold 0',
      });
      expect(evaluateRiskFloor({ filesChanged: ['README.md'] }, { threshold: 0 }).needs_review).toBe(true);
    });

    it('at threshold 1 only auth needs review', () => {
      for (const rule of RISK_TABLE) {
        const path = PATTERN_EXAMPLES[`${rule.surface} ${rule.patterns[0] ?? ''}`] ?? '';
        const v = evaluateRiskFloor({ filesChanged: [path] }, { threshold: 1 });
        expect(v.needs_review, rule.surface).toBe(rule.surface === 'auth');
      }
    });

    it('defaults to 0.5: data/infra/build above it, ui below it', () => {
      expect(evaluateRiskFloor({ filesChanged: ['package.json'] }).reason).toMatch(/review required at threshold 0\.5$/);
      expect(evaluateRiskFloor({ filesChanged: ['a.css'] }).reason).toMatch(/below review threshold 0\.5$/);
      expect(evaluateRiskFloor({ filesChanged: ['a.css'] }, {})).toEqual(evaluateRiskFloor({ filesChanged: ['a.css'] }));
    });

    const bad: Array<[string, unknown]> = [
      ['NaN', Number.NaN],
      ['-0.1', -0.1],
      ['1.5', 1.5],
      ['1.0000001', 1.0000001],
      ['Infinity', Number.POSITIVE_INFINITY],
      ["the string '0.5'", '0.5'],
      ['null', null],
    ];
    for (const [label, value] of bad) {
      it(`throws RiskThresholdError for threshold ${label}`, () => {
        const call = () => evaluateRiskFloor({ filesChanged: ['src/auth.ts'] }, { threshold: value as number });
        expect(call).toThrow(RiskThresholdError);
        expect(call).toThrow(/^risk threshold must be a number from 0 to 1, got /);
        // Also on an empty change: the threshold is checked before anything else.
        expect(() => evaluateRiskFloor({ filesChanged: [] }, { threshold: value as number })).toThrow(RiskThresholdError);
      });
    }

    it('RiskThresholdError is a RangeError that names the bad value', () => {
      let caught: unknown;
      try {
        evaluateRiskFloor({ filesChanged: ['a'] }, { threshold: 1.5 });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(RangeError);
      expect((caught as Error).name).toBe('RiskThresholdError');
      expect((caught as Error).message).toBe('risk threshold must be a number from 0 to 1, got "1.5"');
    });
  });

  describe('determinism', () => {
    const pool = [...Object.values(PATTERN_EXAMPLES), 'src/index.ts', 'Makefile', '', 'a/b/c'];

    it('gives the same verdict for the same input, every time', () => {
      const rand = mulberry32(0x5eed);
      for (let i = 0; i < 200; i++) {
        const files = Array.from({ length: Math.floor(rand() * 8) }, () => pool[Math.floor(rand() * pool.length)] ?? '');
        const threshold = [0, 0.5, 0.6, 0.85, 0.9, 1][Math.floor(rand() * 6)] ?? 0.5;
        const first = evaluateRiskFloor({ filesChanged: files }, { threshold });
        const second = evaluateRiskFloor({ filesChanged: [...files] }, { threshold });
        expect(second).toEqual(first);
      }
    });

    it('gives the same surface, score, needs_review and tripping count whatever the file order', () => {
      const rand = mulberry32(0xc0ffee);
      let nonTrivial = 0;
      for (let i = 0; i < 200; i++) {
        const files = Array.from({ length: 1 + Math.floor(rand() * 8) }, () => pool[Math.floor(rand() * pool.length)] ?? '');
        const threshold = [0, 0.5, 0.6, 0.85, 0.9, 1][Math.floor(rand() * 6)] ?? 0.5;
        const a = evaluateRiskFloor({ filesChanged: files }, { threshold });
        const b = evaluateRiskFloor({ filesChanged: shuffled(files, rand) }, { threshold });
        expect({ s: b.surface, n: b.score, r: b.needs_review }).toEqual({ s: a.surface, n: a.score, r: a.needs_review });
        expect(/ in (\d+) file\(s\)/.exec(b.reason)?.[1]).toBe(/ in (\d+) file\(s\)/.exec(a.reason)?.[1]);
        if (new Set(files.map((f) => classifyPath(f).surface)).size > 1) nonTrivial++;
      }
      // The shuffles must actually mix surfaces, or the test proves nothing.
      expect(nonTrivial).toBeGreaterThan(100);
    });

    it('does not mutate its input', () => {
      const files = Object.freeze(['b.md', 'src/auth.ts', 'a.md']);
      evaluateRiskFloor({ filesChanged: files });
      expect(files).toEqual(['b.md', 'src/auth.ts', 'a.md']);
    });
  });
});

describe('parseThresholdText', () => {
  const accepted: Array<[string, number]> = [
    ['0', 0],
    ['1', 1],
    ['0.5', 0.5],
    ['.5', 0.5],
    ['1.', 1],
    ['0.', 0],
    ['0.123456', 0.123456],
    ['1.000000', 1],
    ['0.000001', 0.000001],
    ['0.85', 0.85],
  ];
  for (const [text, value] of accepted) {
    it(`reads ${JSON.stringify(text)} as ${value}`, () => {
      expect(parseThresholdText(text)).toBe(value);
    });
  }

  const rejected = ['1.5', '-0', 'abc', '', ' 0.5', '0.5 ', '1e-1', '0.1234567', '1.0000001', '.', '01', '+0.5', '2', '0,5', '0.5\n', 'Infinity', 'NaN', '٠.٥'];
  for (const text of rejected) {
    it(`rejects ${JSON.stringify(text)}`, () => {
      expect(parseThresholdText(text)).toBeUndefined();
    });
  }
});
