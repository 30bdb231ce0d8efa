/**
 * A corpus of real-looking secrets, built at run time from a seeded generator (so no literal
 * token sits in the repository for a scanner to trip on), and look-alikes that must survive.
 */

let seed = 0x2f6b1c3d;
function next(): number {
  // xorshift32: deterministic across runs
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 0x1_0000_0000;
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const URLSAFE = `${ALNUM}_-`;
const B64 = `${ALNUM}+/`;

export function randomText(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(next() * alphabet.length)];
  return out;
}

/** A random run that contains at least one digit and one letter (like every real key). */
function mixed(alphabet: string, length: number): string {
  for (;;) {
    const text = randomText(alphabet, length);
    if (/\d/.test(text) && /[A-Za-z]/.test(text)) return text;
  }
}

function b64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}

export interface Secret {
  kind: string;
  /** The secret itself: must not appear anywhere after redaction. */
  value: string;
}

const p = (...parts: string[]) => parts.join('');

/** Secrets that identify themselves by their format: redacted wherever they appear. */
export const SELF_EVIDENT: readonly Secret[] = [
  { kind: 'anthropic_key', value: p('sk-', 'ant-', 'api03-', mixed(URLSAFE, 93), 'AA') },
  { kind: 'anthropic_key', value: p('sk-', 'ant-', 'oat01-', mixed(URLSAFE, 80)) },
  { kind: 'openai_key', value: p('sk-', mixed(ALNUM, 48)) },
  { kind: 'openai_key', value: p('sk-', 'proj-', mixed(URLSAFE, 156)) },
  { kind: 'openai_key', value: p('sk-', 'svcacct-', mixed(URLSAFE, 120)) },
  { kind: 'aws_access_key_id', value: p('AK', 'IA', mixed(UPPER + DIGITS, 16)) },
  { kind: 'aws_access_key_id', value: p('AS', 'IA', mixed(UPPER + DIGITS, 16)) },
  { kind: 'github_token', value: p('gh', 'p_', mixed(ALNUM, 36)) },
  { kind: 'github_token', value: p('gh', 'o_', mixed(ALNUM, 36)) },
  { kind: 'github_token', value: p('gh', 'u_', mixed(ALNUM, 36)) },
  { kind: 'github_token', value: p('gh', 's_', mixed(ALNUM, 36)) },
  { kind: 'github_token', value: p('gh', 'r_', mixed(ALNUM, 36)) },
  { kind: 'github_token', value: p('github', '_pat_', mixed(ALNUM, 22), '_', mixed(ALNUM, 59)) },
  { kind: 'gitlab_token', value: p('gl', 'pat-', mixed(URLSAFE, 20)) },
  { kind: 'slack_token', value: p('xo', 'xb-', randomText(DIGITS, 12), '-', randomText(DIGITS, 13), '-', mixed(ALNUM, 24)) },
  {
    kind: 'slack_token',
    value: p('xo', 'xp-', randomText(DIGITS, 12), '-', randomText(DIGITS, 12), '-', randomText(DIGITS, 13), '-', mixed(LOWER + DIGITS, 32)),
  },
  {
    kind: 'jwt',
    value: p(
      b64url('{"alg":"HS256","typ":"JWT"}'),
      '.',
      b64url(`{"sub":"user-${randomText(DIGITS, 6)}","name":"Dev","iat":1763806500}`),
      '.',
      mixed(URLSAFE, 43),
    ),
  },
];

function pemBody(lines: number): string {
  return Array.from({ length: lines }, () => randomText(B64, 64)).join('\n');
}

export const PRIVATE_KEYS: readonly Secret[] = [
  { kind: 'private_key', value: p('-----BEGIN RSA ', 'PRIVATE KEY-----\n', pemBody(6), '\n-----END RSA ', 'PRIVATE KEY-----') },
  { kind: 'private_key', value: p('-----BEGIN OPENSSH ', 'PRIVATE KEY-----\n', pemBody(4), '\n-----END OPENSSH ', 'PRIVATE KEY-----') },
  { kind: 'private_key', value: p('-----BEGIN ', 'PRIVATE KEY-----\n', pemBody(5), '\n-----END ', 'PRIVATE KEY-----') },
  { kind: 'private_key', value: p('-----BEGIN EC ', 'PRIVATE KEY-----\n', pemBody(3), '\n-----END EC ', 'PRIVATE KEY-----') },
];

/** The inner part of a key block: what must not survive even when the block is cut off. */
export function pemSecretPart(block: string): string {
  return block.split('\n')[1] as string;
}

export const AWS_SECRET = p(mixed(B64, 40));
export const BEARER = mixed(URLSAFE, 40);
export const BASIC = Buffer.from(`deploy:${mixed(ALNUM, 16)}`).toString('base64');
export const GH_APP_TOKEN = mixed(ALNUM, 40);
export const DB_PASS = `Pw${mixed(ALNUM, 14)}!x`;
export const GIT_PASS = `gp${mixed(ALNUM, 18)}`;
export const PLAIN_PASSWORD = `hunter${mixed(ALNUM, 10)}`;
export const SPACED_PASSWORD = `correct horse ${randomText(LOWER, 8)} staple`;
export const API_KEY = `ak_${mixed(ALNUM, 32)}`;
export const TOKEN = `tok_${mixed(ALNUM, 24)}`;
export const CLIENT_SECRET = `cs${mixed(ALNUM, 30)}`;

/** Secrets that are secrets because of where they sit: [kind, secret, text containing it]. */
export const IN_CONTEXT: ReadonlyArray<readonly [string, string, string]> = [
  ['aws_secret_key', AWS_SECRET, `[default]\naws_access_key_id = AKIAEXAMPLEONLY\naws_secret_access_key = ${AWS_SECRET}\n`],
  ['aws_secret_key', AWS_SECRET, `export AWS_SECRET_ACCESS_KEY=${AWS_SECRET} && aws s3 ls`],
  ['aws_secret_key', AWS_SECRET, `aws configure set aws_secret_access_key ${AWS_SECRET}`],
  ['aws_secret_key', AWS_SECRET, `{"AccessKeyId":"x","SecretAccessKey":"${AWS_SECRET}","Expiration":"2025-11-22"}`],
  ['aws_secret_key', AWS_SECRET, `{\\"SecretAccessKey\\": \\"${AWS_SECRET}\\"}`],
  ['authorization', BEARER, `curl -sS -H "Authorization: Bearer ${BEARER}" https://api.example.com/v1/me`],
  ['authorization', BEARER, `> GET /v1/me HTTP/1.1\r\n> Authorization: Bearer ${BEARER}\r\n> Accept: */*`],
  ['authorization', BASIC, `curl -H 'Authorization: Basic ${BASIC}' https://ci.example.com/api`],
  ['authorization', GH_APP_TOKEN, `fetch(url, { headers: { "Authorization": "token ${GH_APP_TOKEN}" } })`],
  ['authorization', GH_APP_TOKEN, `authorization=${GH_APP_TOKEN}9`],
  ['url_credentials', DB_PASS, `psql postgres://admin:${DB_PASS}@db.internal:5432/app -c 'select 1'`],
  ['url_credentials', GIT_PASS, `git clone https://deploy:${GIT_PASS}@git.example.com/acme/app.git`],
  ['url_credentials', GIT_PASS, `REDIS_URL=redis://:${GIT_PASS}@cache.internal:6379/0`],
  ['password', PLAIN_PASSWORD, `mysql -u root --password=${PLAIN_PASSWORD} app`],
  ['password', PLAIN_PASSWORD, `DB_PASSWORD=${PLAIN_PASSWORD}\nDB_HOST=localhost\n`],
  ['password', PLAIN_PASSWORD, `database:\n  user: app\n  password: ${PLAIN_PASSWORD}\n`],
  ['password', SPACED_PASSWORD, `{"user": "app", "password": "${SPACED_PASSWORD}"}`],
  ['password', SPACED_PASSWORD, `config = {'Password': '${SPACED_PASSWORD}'}`],
  ['password', PLAIN_PASSWORD, `{\\"password\\":\\"${PLAIN_PASSWORD}\\",\\"user\\":\\"app\\"}`],
  ['password', PLAIN_PASSWORD, `password: '${PLAIN_PASSWORD}`],
  ['password', PLAIN_PASSWORD, `{\\"password\\": \\"${PLAIN_PASSWORD}`],
  ['api_key', API_KEY, `STRIPE_API_KEY=${API_KEY} npm run dev`],
  ['api_key', API_KEY, `{"api_key": "${API_KEY}"}`],
  ['api_key', API_KEY, `curl -H "x-api-key: ${API_KEY}" https://api.example.com`],
  ['api_key', API_KEY, `apiKey: '${API_KEY}',`],
  ['token', TOKEN, `https://hooks.example.com/notify?token=${TOKEN}&channel=dev`],
  ['token', TOKEN, `ACCESS_TOKEN="${TOKEN}"`],
  ['token', TOKEN, `"refresh_token" : "${TOKEN}"`],
  ['secret', CLIENT_SECRET, `client_secret: ${CLIENT_SECRET}`],
  ['secret', CLIENT_SECRET, `SECRET=${CLIENT_SECRET}`],
];

/** Contexts a self-evident secret is tested in. */
export const CONTEXTS: ReadonlyArray<readonly [string, (s: string) => string]> = [
  ['a Bash command', (s) => `echo ${s} | some-cli login --with-token && some-cli whoami`],
  ['an env file', (s) => `# generated\nSERVICE_CREDENTIAL=${s}\nDEBUG=false\n`],
  ['source code', (s) => `const client = new Client("${s}");\n`],
  ['a URL', (s) => `https://api.example.com/v1/things?key=${s}&page=2`],
  ['a JSON string', (s) => JSON.stringify({ headers: { 'X-Custom': s }, retries: 3 })],
  ['JSON-escaped text', (s) => `{\\"value\\":\\"${s}\\"}`],
  ['prose', (s) => `I rotated the credential (${s}) as you asked.`],
  ['start of text', (s) => s],
];

function base64Image(bytes: number): string {
  return Buffer.from(Array.from({ length: bytes }, () => Math.floor(next() * 256))).toString('base64');
}

/** Look-alikes: each must come out of redaction unchanged. */
export const LOOK_ALIKES: ReadonlyArray<readonly [string, string]> = [
  ['a git sha', 'commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)'],
  ['a bare 40-hex sha', 'd670460b4b4aece5915caf5c68d12f560a9fe3e4'],
  ['a UUID', 'session 550e8400-e29b-41d4-a716-446655440000 started'],
  ["'sk-' inside words", 'see task-list-for-q3-planning-2024 and risk-assessment-2025-v2-final'],
  ['sk- alone', 'the sk- prefix marks OpenAI keys'],
  ['base64 image data', `data:image/png;base64,${base64Image(3000)}`],
  ['base64 blob in JSON', JSON.stringify({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: base64Image(1200) } })],
  ["'password' as a word", 'Please enter your password to continue. The password field must not be empty.'],
  ['password policy prose', 'Passwords are hashed with argon2; password reset links expire after 1h.'],
  ['an Authorization word', 'Check the Authorization header and the authorization flow.'],
  ['Authorization without a value', 'Authorization:\nAuthorization: required'],
  ['token counts', '{"input_tokens": 1234, "output_tokens": 56, "max_tokens": 4096}'],
  ['a type annotation', 'interface Login { password: string; token: string | null }'],
  ['a shell variable', 'export PASSWORD=$DB_PASSWORD && psql'],
  ['an ssh remote', 'git@github.com:acme/app.git'],
  ['a URL with a port', 'http://localhost:8080/health?verbose=1'],
  ['a URL with a user only', 'ssh://git@git.example.com/acme/app.git'],
  ['a short AKIA', 'AKIA is the prefix of AWS access key ids; ASIA too'],
  ['a public key', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl dev@laptop'],
  ['a test summary', 'Tests: 12 passed, 12 total'],
  ['a JWT-ish word', 'eyJ is how base64 of {" starts'],
  ['placeholders after password=', 'password=... token: \u2026 secret = *** api_key: xxx'],
];
