/**
 * Redaction of secrets before anything reaches the event log. Pure: strings in, strings out.
 *
 * Every match is replaced by `[REDACTED:<kind>]`. Where a secret sits in an assignment or header
 * (`password=…`, `Authorization: Bearer …`, `aws_secret_access_key = …`, `scheme://user:pass@host`)
 * the name, the scheme and the host stay so the event still reads; only the secret goes.
 *
 * JSON values are walked with an explicit stack (no recursion), so a payload nested a hundred
 * thousand levels deep is redacted like a flat one. Object keys are redacted too, and a string
 * under a key that names a secret (`"password"`, `"access_token"`, `"Authorization"`, …) is
 * replaced whole, since once parsed the key and its value are no longer one string.
 */

export interface RedactionPattern {
  /** The `<kind>` in `[REDACTED:<kind>]`. */
  kind: string;
  /** A global regex. */
  regex: RegExp;
}

export interface RedactionRules {
  /** Extra patterns from configuration, applied after the built-in ones. */
  extra: readonly RedactionPattern[];
}

export const NO_EXTRA_RULES: RedactionRules = { extra: [] };

export function marker(kind: string): string {
  return `[REDACTED:${kind}]`;
}

interface BuiltinRule {
  kind: string;
  regex: RegExp;
  /** Builds the replacement from the match; default: the marker alone. */
  replace?: (match: string, ...groups: string[]) => string;
}

/** Characters of a token run; a secret must not start in the middle of one. */
const NOT_AFTER_TOKEN = '(?<![A-Za-z0-9_-])';
/** Skips values another rule has already redacted. */
const NOT_REDACTED = '(?!\\[REDACTED:)';
/** An optional quote, also JSON-escaped (`\"`) as in raw payload text. */
const Q = `(?:\\\\?["'])?`;

/** Words that sit after `password:` or `token =` without being secrets. */
const NOT_A_SECRET = /^(?:null|none|nil|undefined|true|false|string|number|str|bool|required|optional|\*+|x+|\.{3}|\u2026)$/i;
const VARIABLE_REF = /^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%|<[^<>]*>)$/;

const ASSIGNMENT_KINDS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^pass/i, 'password'],
  [/^secret/i, 'secret'],
  [/^token/i, 'token'],
  [/^api/i, 'api_key'],
];

function assignmentKind(name: string): string {
  for (const [re, kind] of ASSIGNMENT_KINDS) if (re.test(name)) return kind;
  return 'secret';
}

/**
 * The built-in rules, in order: specific token formats first, then context rules (headers,
 * URLs, assignments) that skip what an earlier rule already replaced.
 */
const BUILTIN_RULES: readonly BuiltinRule[] = [
  {
    kind: 'private_key',
    // A key block, also one cut off by truncation (then everything to the end goes).
    regex: /-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)/g,
  },
  { kind: 'anthropic_key', regex: new RegExp(`${NOT_AFTER_TOKEN}sk-ant-[A-Za-z0-9_-]{16,}`, 'g') },
  {
    kind: 'openai_key',
    // sk-…, sk-proj-…, sk-svcacct-…: a long run with at least one digit and one letter, so prose
    // like `sk-` inside 'task-list' or a hyphenated name does not match.
    regex: new RegExp(`${NOT_AFTER_TOKEN}sk-(?=[A-Za-z0-9_-]*\\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{20,}`, 'g'),
  },
  { kind: 'aws_access_key_id', regex: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g },
  {
    kind: 'aws_secret_key',
    regex: new RegExp(`((?:aws)?[_-]?secret[_-]?(?:access)?[_-]?key${Q}[ \\t]*(?:[:=]|=>|\\s)[ \\t]*${Q})([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])`, 'gi'),
    replace: (_m, prefix) => `${prefix}${marker('aws_secret_key')}`,
  },
  {
    kind: 'github_token',
    regex: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])/g,
  },
  { kind: 'gitlab_token', regex: new RegExp(`${NOT_AFTER_TOKEN}glpat-[A-Za-z0-9_-]{20,}`, 'g') },
  { kind: 'slack_token', regex: new RegExp(`${NOT_AFTER_TOKEN}xox[abposr]-[A-Za-z0-9-]{10,}`, 'g') },
  {
    kind: 'jwt',
    regex: new RegExp(`${NOT_AFTER_TOKEN}eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}`, 'g'),
  },
  {
    kind: 'authorization',
    // `Authorization: <scheme> <credentials>` (the rest of the header line up to a quote), or a
    // bare credential that looks like one (16+ token characters with a digit).
    regex: new RegExp(
      `((?:proxy-)?authorization${Q}[ \\t]*[:=][ \\t]*${Q}[ \\t]*)` +
        `(?:((?:bearer|basic|token|digest|negotiate|ntlm|bot|apikey|aws4-hmac-sha256)[ \\t]+)${NOT_REDACTED}([^\\r\\n"'\\\\]+)` +
        `|${NOT_REDACTED}((?=[A-Za-z0-9._~+/=-]*\\d)[A-Za-z0-9._~+/=-]{16,}))`,
      'gi',
    ),
    replace: (_m, prefix, scheme) => `${prefix}${scheme ?? ''}${marker('authorization')}`,
  },
  {
    kind: 'authorization',
    // A bearer credential on its own (a header given as a [name, value] pair, a curl -H argument
    // already split): `Bearer ` + 16+ token characters with a digit.
    regex: new RegExp(`(\\bbearer[ \\t]+)${NOT_REDACTED}(?=[A-Za-z0-9._~+/=-]*\\d)[A-Za-z0-9._~+/=-]{16,}`, 'gi'),
    replace: (_m, prefix) => `${prefix}${marker('authorization')}`,
  },
  {
    kind: 'url_credentials',
    regex: /\b([a-z][a-z0-9+.-]{0,30}:\/\/)[^\s/?#@:"'<>\\]*:[^\s/?#"'<>\\]*@/gi,
    replace: (_m, scheme) => `${scheme}${marker('url_credentials')}@`,
  },
  {
    kind: 'assignment',
    // name (ending in one of the words) + `=`, `:`, `:=` or `=>` + a value, quoted or not.
    regex: new RegExp(
      `(password|passwd|passphrase|secret(?:[_-]?(?:access)?[_-]?key)?|token|api[_-]?key)` +
        `(\\\\?["']?[ \\t]*(?::=|=>|:|=(?!=))[ \\t]*)` +
        // a value in \"escaped quotes\", in "quotes" or 'quotes', or bare (also after a quote
        // that never closes, as in a payload cut off by truncation)
        `(?:(\\\\")((?:[^"\\\\\\n]|\\\\(?!"))*)\\\\"|(["'])((?:(?!\\5)[^\\n])*)\\5|(\\\\?["']?)${NOT_REDACTED}([^\\s"'\\\\,;&|<>(){}\\[\\]]+))`,
      'gi',
    ),
    replace: (match, name, sep, escQuote, escValue, quote, quotedValue, openQuote, bare) => {
      const value = escValue ?? quotedValue ?? bare ?? '';
      // A lone `$` is the start of `${VAR}`, a reference, not a secret.
      if (value === '' || value === '$' || value.startsWith('[REDACTED:') || NOT_A_SECRET.test(value) || VARIABLE_REF.test(value)) return match;
      const redacted = marker(assignmentKind(name));
      if (escQuote !== undefined) return `${name}${sep}\\"${redacted}\\"`;
      if (quote !== undefined) return `${name}${sep}${quote}${redacted}${quote}`;
      return `${name}${sep}${openQuote ?? ''}${redacted}`;
    },
  },
];

/** A cheap test: a string without any of these cannot match a built-in rule. */
const TRIGGER = /sk-|AKIA|ASIA|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|PRIVATE KEY|eyJ|:\/\/|authorization|bearer|pass|secret|token|api[_-]?key/i;

/** Redacts one string with the built-in rules, then the configured ones. */
export function redactText(text: string, rules: RedactionRules = NO_EXTRA_RULES): string {
  let out = text;
  if (TRIGGER.test(out)) {
    for (const rule of BUILTIN_RULES) {
      rule.regex.lastIndex = 0;
      if (!rule.regex.test(out)) continue;
      rule.regex.lastIndex = 0;
      const replace = rule.replace;
      out = replace === undefined ? out.replace(rule.regex, marker(rule.kind)) : out.replace(rule.regex, replace as (m: string, ...g: string[]) => string);
    }
  }
  for (const pattern of rules.extra) {
    pattern.regex.lastIndex = 0;
    const replacement = marker(pattern.kind);
    out = out.replace(pattern.regex, () => replacement);
  }
  return out;
}

/**
 * The kind of secret a key names (`password`, `DB_PASSWORD`, `access_token`, `x-api-key`,
 * `Authorization`, `aws_secret_access_key`, `private_key`), or undefined.
 */
export function sensitiveKeyKind(key: string): string | undefined {
  if (key.length > 64) return undefined;
  // Payloads repeat the same few dozen keys: each is judged once per process.
  const known = keyKinds.get(key);
  if (known !== undefined) return known === '' ? undefined : known;
  const kind = keyKindOf(key);
  remember(keyKinds, key, kind ?? '');
  return kind;
}

/** Entries a memo keeps before it starts over (keys are at most 64 characters where it counts). */
const MEMO_LIMIT = 4_096;
/** sensitiveKeyKind's answers ('' for none). */
const keyKinds = new Map<string, string>();
/** Object keys as redactText leaves them (the built-in rules only: configured ones may change). */
const redactedKeyTexts = new Map<string, string>();

function remember(memo: Map<string, string>, key: string, value: string): void {
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(key, value);
}

function keyKindOf(key: string): string | undefined {
  const k = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (k.endsWith('password') || k.endsWith('passwd') || k.endsWith('passphrase')) return 'password';
  if (k.endsWith('secretaccesskey')) return 'aws_secret_key';
  if (k.endsWith('secret') || k.endsWith('secretkey')) return 'secret';
  if (k.endsWith('token')) return 'token';
  if (k.endsWith('apikey')) return 'api_key';
  if (k.endsWith('authorization')) return 'authorization';
  if (k.endsWith('privatekey')) return 'private_key';
  return undefined;
}

function redactUnderKey(key: string, value: string, rules: RedactionRules): string {
  const kind = sensitiveKeyKind(key);
  if (kind !== undefined && value !== '' && !value.startsWith('[REDACTED:') && !NOT_A_SECRET.test(value) && !VARIABLE_REF.test(value)) {
    return marker(kind);
  }
  return redactText(value, rules);
}

/** Redacted copies of an object's keys, or undefined when none changed. */
function redactedKeys(keys: readonly string[], rules: RedactionRules): string[] | undefined {
  let changed: string[] | undefined;
  const builtinOnly = rules.extra.length === 0;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    let redacted = builtinOnly && key.length <= 64 ? redactedKeyTexts.get(key) : undefined;
    if (redacted === undefined) {
      redacted = redactText(key, rules);
      if (builtinOnly && key.length <= 64) remember(redactedKeyTexts, key, redacted);
    }
    if (redacted !== key) {
      changed ??= keys.slice();
      changed[i] = redacted;
    }
  }
  return changed;
}

/** Rewrites an object's keys in place, keeping their order (and any colliding keys, suffixed). */
function renameKeys(node: Record<string, unknown>, keys: readonly string[], renamed: readonly string[]): void {
  const values = keys.map((k) => node[k]);
  for (const k of keys) delete node[k];
  const taken = new Set<string>();
  for (let i = 0; i < renamed.length; i++) {
    let name = renamed[i] as string;
    for (let n = 2; taken.has(name); n++) name = `${renamed[i]} (${n})`;
    taken.add(name);
    // defineProperty, so a key named `__proto__` stays a plain key.
    Object.defineProperty(node, name, { value: values[i], enumerable: true, writable: true, configurable: true });
  }
}

/**
 * Redacts every string of a parsed JSON value (keys and values, at any depth) IN PLACE and
 * returns it (a string value is returned redacted). Meant for a value fresh from JSON.parse.
 */
export function redactJsonInPlace(value: unknown, rules: RedactionRules = NO_EXTRA_RULES): unknown {
  if (typeof value === 'string') return redactText(value, rules);
  if (value === null || typeof value !== 'object') return value;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const node = stack.pop() as object;
    if (Array.isArray(node)) {
      // A string after a string that names a secret is its value: ["Authorization", "Bearer …"].
      let previous: unknown;
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === 'string') {
          const redacted = typeof previous === 'string' ? redactUnderKey(previous, item, rules) : redactText(item, rules);
          if (redacted !== item) node[i] = redacted;
        } else if (item !== null && typeof item === 'object') stack.push(item);
        previous = item;
      }
      continue;
    }
    const record = node as Record<string, unknown>;
    const keys = Object.keys(record);
    for (const key of keys) {
      const item = record[key];
      // A number under a key that names a secret (`"pin": …` aside, `"password": 123456`) goes too.
      const secretNumber = typeof item === 'number' && sensitiveKeyKind(key) !== undefined;
      if (typeof item === 'string' || secretNumber) {
        const redacted = secretNumber ? marker(sensitiveKeyKind(key) as string) : redactUnderKey(key, item as string, rules);
        if (redacted === item) continue;
        // A key named `__proto__` (an own key from JSON.parse): plain assignment would call the
        // prototype setter and silently keep the unredacted string.
        if (key === '__proto__') Object.defineProperty(record, key, { value: redacted, enumerable: true, writable: true, configurable: true });
        else record[key] = redacted;
      } else if (item !== null && typeof item === 'object') stack.push(item);
    }
    const renamed = redactedKeys(keys, rules);
    if (renamed !== undefined) renameKeys(record, keys, renamed);
  }
  return value;
}
