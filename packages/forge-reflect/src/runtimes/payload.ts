/** Small readers for untrusted hook payloads, shared by the runtime modules. Pure. */

export type Payload = Record<string, unknown>;

export function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** A non-negative duration in milliseconds, rounded; anything else null. */
export function ms(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return Math.round(value);
  if (typeof value === 'string' && /^\d{1,12}(\.\d+)?$/.test(value)) return Math.round(Number(value));
  return null;
}

export function obj(value: unknown): Payload | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Payload) : undefined;
}

export function has(p: Payload, key: string): boolean {
  return Object.hasOwn(p, key);
}

export function firstString(value: unknown): string | null {
  return Array.isArray(value) ? str(value[0]) : null;
}

/** The fields every runtime module reads out of its payloads. */
export interface Fields {
  sessionId: string | null;
  agentId: string | null;
  toolName: string | null;
  toolUseId: string | null;
  durationMs: number | null;
  cwd: string | null;
}
