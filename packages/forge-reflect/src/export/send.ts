/**
 * One OTLP/HTTP request, retried as the OTLP specification asks: 408, 429, 502, 503, 504 (and any other
 * 5xx), timeouts and connection failures are retried with exponential backoff (honouring a
 * Retry-After in seconds), all within a deadline; any other non-2xx is a refusal and is not retried.
 */
export interface SendRequest {
  url: string;
  body: Uint8Array;
  contentType: string;
  headers: Record<string, string>;
  /** Epoch ms by which the request must have succeeded. */
  deadline: number;
}

export type SendOutcome =
  | { ok: true; status: number; attempts: number }
  | { ok: false; refused: true; status: number; attempts: number }
  | { ok: false; refused: false; reason: string; attempts: number };

const PER_ATTEMPT_MS = 10_000;
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5_000;

function retryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

function retryAfterMs(value: string | null): number | undefined {
  if (value === null) return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** fetch refuses URLs with user:password: they become a Basic Authorization header instead. */
function withoutCredentials(url: string, headers: Record<string, string>): { url: string; headers: Record<string, string> } {
  const u = new URL(url);
  if (u.username === '' && u.password === '') return { url, headers };
  const basic = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
  u.username = '';
  u.password = '';
  const hasAuth = Object.keys(headers).some((k) => k.toLowerCase() === 'authorization');
  return { url: u.href, headers: hasAuth ? headers : { ...headers, Authorization: `Basic ${basic}` } };
}

export async function sendWithRetry(request: SendRequest, now: () => number = Date.now): Promise<SendOutcome> {
  const { url, headers } = withoutCredentials(request.url, request.headers);
  let attempts = 0;
  let backoff = FIRST_BACKOFF_MS;
  let reason = 'no attempt fit in the time budget';
  for (;;) {
    const left = request.deadline - now();
    if (left <= 0) return { ok: false, refused: false, reason, attempts };
    attempts++;
    let wait: number | undefined;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': request.contentType },
        body: request.body,
        signal: AbortSignal.timeout(Math.max(1, Math.min(PER_ATTEMPT_MS, left))),
      });
      await response.arrayBuffer().catch(() => undefined); // drain the body so the socket is reused
      if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status, attempts };
      if (!retryable(response.status)) return { ok: false, refused: true, status: response.status, attempts };
      reason = `HTTP ${response.status}`;
      wait = retryAfterMs(response.headers.get('retry-after'));
    } catch (error) {
      const e = error as { name?: string; cause?: { code?: string }; message?: string };
      reason = e.name === 'TimeoutError' || e.name === 'AbortError' ? 'timed out' : (e.cause?.code ?? e.message ?? String(error));
    }
    const pause = Math.min(wait ?? backoff, MAX_BACKOFF_MS, Math.max(0, request.deadline - now()));
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    if (pause > 0) await sleep(pause);
  }
}
