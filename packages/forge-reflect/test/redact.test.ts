import { describe, expect, it } from 'vitest';
import { compileRedactionConfig, loadRedactionRules } from '../src/log/redact-config.js';
import { NO_EXTRA_RULES, redactJsonInPlace, redactText, sensitiveKeyKind } from '../src/log/redact.js';
import { safeStringify } from '../src/safe-json.js';
import { cleanupTempDirs, tempDir } from './helpers/spool.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { CONTEXTS, IN_CONTEXT, LOOK_ALIKES, pemSecretPart, PRIVATE_KEYS, SELF_EVIDENT, TOKEN, PLAIN_PASSWORD, BEARER } from './helpers/secrets.js';

afterEach(cleanupTempDirs);

describe('redactText: secrets that identify themselves', () => {
  for (const secret of SELF_EVIDENT) {
    for (const [where, wrap] of CONTEXTS) {
      it(`removes a ${secret.kind} (${secret.value.slice(0, 7)}…) in ${where}`, () => {
        const out = redactText(wrap(secret.value));
        expect(out).not.toContain(secret.value);
        expect(out).toContain(`[REDACTED:${secret.kind}]`);
      });
    }
  }
});

describe('redactText: private key blocks', () => {
  for (const key of PRIVATE_KEYS) {
    const label = key.value.split('\n')[0];
    it(`removes ${label} in file content`, () => {
      const out = redactText(`# deploy key\n${key.value}\n# end\n`);
      expect(out).toBe('# deploy key\n[REDACTED:private_key]\n# end\n');
    });
    it(`removes ${label} in JSON-escaped text (\\n escapes)`, () => {
      const escaped = JSON.stringify({ content: key.value }).slice(1, -1);
      const out = redactText(escaped);
      expect(out).not.toContain(pemSecretPart(key.value));
      expect(out).toContain('[REDACTED:private_key]');
    });
    it(`removes ${label} cut off before its END line`, () => {
      const cut = key.value.slice(0, key.value.length - 40);
      const out = redactText(`cat id_rsa:\n${cut}`);
      expect(out).toBe('cat id_rsa:\n[REDACTED:private_key]');
    });
  }
});

describe('redactText: secrets by context', () => {
  for (const [kind, secret, text] of IN_CONTEXT) {
    it(`removes the ${kind} in ${JSON.stringify(text.slice(0, 48))}…`, () => {
      const out = redactText(text);
      expect(out).not.toContain(secret);
      expect(out).toContain(`[REDACTED:${kind}]`);
    });
  }

  it('keeps the header name and scheme, and the URL scheme and host', () => {
    expect(redactText(`curl -H "Authorization: Bearer ${BEARER}" https://api.example.com`)).toBe(
      'curl -H "Authorization: Bearer [REDACTED:authorization]" https://api.example.com',
    );
    expect(redactText('psql postgres://admin:S3cretPass99@db.internal:5432/app')).toBe('psql postgres://[REDACTED:url_credentials]@db.internal:5432/app');
  });

  it('keeps the name, separator and quotes of an assignment', () => {
    expect(redactText(`DB_PASSWORD=${PLAIN_PASSWORD}`)).toBe('DB_PASSWORD=[REDACTED:password]');
    expect(redactText(`{"token": "${TOKEN}", "n": 1}`)).toBe('{"token": "[REDACTED:token]", "n": 1}');
    expect(redactText(`Password: '${PLAIN_PASSWORD}'`)).toBe("Password: '[REDACTED:password]'");
  });

  it('redacts each of several secrets in one string', () => {
    const [a, b] = SELF_EVIDENT;
    const text = `A=${a?.value} B=${b?.value} password=${PLAIN_PASSWORD}`;
    const out = redactText(text);
    for (const s of [a?.value, b?.value, PLAIN_PASSWORD]) expect(out).not.toContain(s);
  });
});

describe('redactText: look-alikes survive', () => {
  for (const [what, text] of LOOK_ALIKES) {
    it(`keeps ${what}`, () => {
      expect(redactText(text)).toBe(text);
    });
  }
});

describe('redactJsonInPlace', () => {
  it('redacts values and keys at every level, and whole values under secret-naming keys', () => {
    const anthropic = SELF_EVIDENT.find((s) => s.kind === 'anthropic_key');
    const openai = SELF_EVIDENT.find((s) => s.kind === 'openai_key');
    const value = {
      tool_input: { command: `export KEY=${anthropic?.value}`, env: { password: PLAIN_PASSWORD, DB_PASSWORD: 'x9-plain', max_tokens: 4096 } },
      tool_response: { headers: [{ Authorization: `Bearer ${BEARER}` }, { accessToken: TOKEN }] },
      [openai?.value as string]: 'a key used as a key',
      'x-api-key': 'k-123456',
      aws_secret_access_key: 'abc/def+ghi',
      empty_token: '',
    };
    const out = redactJsonInPlace(value) as Record<string, any>;
    const text = JSON.stringify(out);
    for (const s of [anthropic?.value, openai?.value, PLAIN_PASSWORD, 'x9-plain', BEARER, TOKEN, 'k-123456', 'abc/def+ghi']) {
      expect(text).not.toContain(s);
    }
    expect(out.tool_input.env.password).toBe('[REDACTED:password]');
    expect(out.tool_input.env.max_tokens).toBe(4096);
    expect(out.tool_response.headers[0].Authorization).toBe('[REDACTED:authorization]');
    expect(out['[REDACTED:openai_key]']).toBe('a key used as a key');
    expect(out.aws_secret_access_key).toBe('[REDACTED:aws_secret_key]');
    expect(out.empty_token).toBe('');
    expect(Object.keys(out)).toEqual(['tool_input', 'tool_response', '[REDACTED:openai_key]', 'x-api-key', 'aws_secret_access_key', 'empty_token']);
  });

  it('keeps both of two keys that redact to the same text', () => {
    const [a, , c] = SELF_EVIDENT;
    const out = redactJsonInPlace({ [a?.value as string]: 1, [`${a?.value}Z`]: 2, [c?.value as string]: 3 }) as Record<string, number>;
    expect(Object.values(out).sort()).toEqual([1, 2, 3]);
  });

  it('treats a __proto__ key as a plain key', () => {
    const value = JSON.parse(`{"__proto__": {"password": "${PLAIN_PASSWORD}"}, "${SELF_EVIDENT[0]?.value}": 1}`);
    const out = redactJsonInPlace(value) as Record<string, unknown>;
    expect(JSON.stringify(out)).not.toContain(PLAIN_PASSWORD);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  it('survives nesting 100,000 levels deep, and the result still serialises', () => {
    const secret = SELF_EVIDENT[0]?.value as string;
    const depth = 100_000;
    const value = JSON.parse(`${'['.repeat(depth)}${JSON.stringify(`key ${secret}`)}${']'.repeat(depth)}`);
    const out = redactJsonInPlace(value);
    const text = safeStringify(out);
    expect(text).not.toContain(secret);
    expect(text).toContain('[REDACTED:anthropic_key]');
    expect(text.length).toBe(2 * depth + JSON.stringify('key [REDACTED:anthropic_key]').length);
  });

  it("judges a key the same every time it is seen, past the memo's limit, and applies configured rules to keys it has seen before", () => {
    const payload = () => ({ DB_PASSWORD: 'x9-plain', tool_name: 'Bash', acme_internal_id: 7 });
    expect(redactJsonInPlace(payload())).toEqual({ DB_PASSWORD: '[REDACTED:password]', tool_name: 'Bash', acme_internal_id: 7 });
    // 10,000 other keys in between (the memo starts over at 4,096): the same answers after.
    for (let i = 0; i < 10_000; i++) expect(sensitiveKeyKind(`k${i}_token`)).toBe('token');
    expect(sensitiveKeyKind('DB_PASSWORD')).toBe('password');
    expect(sensitiveKeyKind('tool_name')).toBeUndefined();
    expect(redactJsonInPlace(payload())).toEqual({ DB_PASSWORD: '[REDACTED:password]', tool_name: 'Bash', acme_internal_id: 7 });
    // A configured pattern renames a key the built-in rules left as it was.
    const rules = { extra: [{ kind: 'internal', regex: /acme_internal/g }] };
    expect(Object.keys(redactJsonInPlace(payload(), rules) as object)).toEqual(['DB_PASSWORD', 'tool_name', '[REDACTED:internal]_id']);
    expect(Object.keys(redactJsonInPlace(payload()) as object)).toEqual(['DB_PASSWORD', 'tool_name', 'acme_internal_id']);
  });

  it('returns a redacted string for a top-level string and leaves numbers alone', () => {
    expect(redactJsonInPlace(`token=${TOKEN}`)).toBe('token=[REDACTED:token]');
    expect(redactJsonInPlace(42)).toBe(42);
    expect(redactJsonInPlace(null)).toBeNull();
  });
});

describe('sensitiveKeyKind', () => {
  it.each([
    ['password', 'password'],
    ['DB_PASSWORD', 'password'],
    ['client_secret', 'secret'],
    ['access_token', 'token'],
    ['githubToken', 'token'],
    ['x-api-key', 'api_key'],
    ['Authorization', 'authorization'],
    ['SecretAccessKey', 'aws_secret_key'],
    ['private_key', 'private_key'],
  ])('%s names a %s', (key, kind) => expect(sensitiveKeyKind(key)).toBe(kind));

  it.each(['max_tokens', 'input_tokens', 'token_count', 'tool_use_id', 'session_id', 'description', 'tokenizer', 'secrets_found'])(
    '%s names no secret',
    (key) => expect(sensitiveKeyKind(key)).toBeUndefined(),
  );
});

describe('configured patterns', () => {
  it('applies valid patterns and warns about each bad one without failing', () => {
    const warnings: string[] = [];
    const rules = compileRedactionConfig(
      {
        redact: {
          patterns: [
            { kind: 'employee_id', regex: 'EMP-\\d{6}' },
            { kind: 'broken', regex: '(unclosed' },
            { kind: 'bad kind!', regex: 'x' },
            { kind: 'no_regex' },
            { kind: 'ticket', regex: 'acme-[a-z]+', flags: 'i' },
          ],
        },
      },
      (m) => warnings.push(m),
    );
    expect(rules.extra.map((p) => p.kind)).toEqual(['employee_id', 'ticket']);
    expect(warnings).toHaveLength(3);
    expect(warnings[0]).toContain('invalid regex');
    expect(redactText('EMP-123456 filed ACME-Secret, see EMP-654321', rules)).toBe(
      '[REDACTED:employee_id] filed [REDACTED:ticket], see [REDACTED:employee_id]',
    );
  });

  it('runs configured patterns even on strings without a built-in trigger', () => {
    const rules = compileRedactionConfig({ redact: { patterns: [{ kind: 'host', regex: 'internal\\.acme\\.corp' }] } }, () => {});
    expect(redactText('ping internal.acme.corp', rules)).toBe('ping [REDACTED:host]');
    expect(redactText('ping internal.acme.corp', NO_EXTRA_RULES)).toBe('ping internal.acme.corp');
  });

  it('reads <state dir>/config.json; a missing file is silent, a broken one is a warning', () => {
    const dir = tempDir();
    const warnings: string[] = [];
    expect(loadRedactionRules(dir, (m) => warnings.push(m)).extra).toEqual([]);
    expect(warnings).toEqual([]);

    writeFileSync(join(dir, 'config.json'), '{ not json');
    expect(loadRedactionRules(dir, (m) => warnings.push(m)).extra).toEqual([]);
    expect(warnings).toHaveLength(1);

    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({
        redact: {
          patterns: [
            { kind: 'emp', regex: 'EMP-\\d+' },
            { kind: 'x', regex: '[' },
          ],
        },
      }),
    );
    const rules = loadRedactionRules(dir, (m) => warnings.push(m));
    expect(rules.extra.map((p) => p.kind)).toEqual(['emp']);
    expect(warnings).toHaveLength(2);

    writeFileSync(join(dir, 'config.json'), JSON.stringify({ redact: { patterns: 'EMP' } }));
    expect(loadRedactionRules(dir, (m) => warnings.push(m)).extra).toEqual([]);
    expect(warnings).toHaveLength(3);
  });
});

describe('redaction gaps found in review', () => {
  it('a number under a key that names a secret, a [name, value] header pair, a bare Bearer token', () => {
    const value = redactJsonInPlace({
      password: 123456789,
      port: 8080,
      headers: [
        ['Authorization', 'Bearer abcdefghijklmnop123456'],
        ['Accept', 'text/html'],
      ],
      argv: ['curl', '-H', 'Bearer abcdefghijklmnop123456'],
    });
    const text = JSON.stringify(value);
    expect(text).not.toContain('123456789');
    expect(text).not.toContain('abcdefghijklmnop123456');
    expect(value).toMatchObject({
      port: 8080,
      headers: [
        ['Authorization', '[REDACTED:authorization]'],
        ['Accept', 'text/html'],
      ],
    });
  });

  it('leaves ${VAR} references alone', () => {
    expect(redactText('password=${PASS} ok')).toBe('password=${PASS} ok');
    expect(redactText('password=hunter2x')).toBe('password=[REDACTED:password]');
  });
});
