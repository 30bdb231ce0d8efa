/**
 * Where and how `export` sends: the OTLP/HTTP endpoints, protocol, headers and resource, from the
 * command's flags, the standard OpenTelemetry environment variables and `.forge/config.json`
 * (`{"export": {"endpoint": "...", "protocol": "...", "headers": {"k": "v"}}}`), in that order of
 * precedence. Pure: the environment and the config are passed in.
 *
 * The endpoint rules are the OpenTelemetry exporter specification's: a base endpoint
 * (`--endpoint`, `OTEL_EXPORTER_OTLP_ENDPOINT`, `export.endpoint`) gets `v1/logs` / `v1/traces`
 * appended to its path; a per-signal variable (`OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is used exactly as given.
 */
import { usageError } from '../errors.js';
import { redactText } from '../log/redact.js';

export const PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type Protocol = (typeof PROTOCOLS)[number];
export type Signal = 'logs' | 'traces';

export const DEFAULT_SERVICE_NAME = 'forge-reflect';
export const ENDPOINT_FORMS = 'an http:// or https:// URL such as http://127.0.0.1:4318';

export interface SignalTarget {
  url: string;
  protocol: Protocol;
  headers: Record<string, string>;
}

export interface ExportTarget {
  logs: SignalTarget;
  traces: SignalTarget;
  /** Resource attributes: OTEL_RESOURCE_ATTRIBUTES, then service.name. */
  resource: Record<string, string>;
}

export interface ExportFlags {
  endpoint?: string;
  protocol?: string;
}

/** The `export` part of `.forge/config.json`, unchecked. */
export interface ExportConfig {
  endpoint?: unknown;
  protocol?: unknown;
  headers?: unknown;
}

const SIGNAL_VAR: Record<Signal, string> = { logs: 'LOGS', traces: 'TRACES' };

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** An endpoint as printed or stored: without user:password, and with secret-looking query values redacted. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username !== '' || u.password !== '') {
      u.username = '';
      u.password = '';
    }
    return redactText(u.href);
  } catch {
    return redactText(url);
  }
}

/** Checks an endpoint; throws a usage error naming the valid forms. */
export function parseEndpoint(value: string, where: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usageError(`${where} ${JSON.stringify(redactText(value))} is not a URL; give ${ENDPOINT_FORMS}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw usageError(`${where} ${JSON.stringify(displayUrl(value))} is not an http(s) URL; give ${ENDPOINT_FORMS}`);
  }
  return url;
}

export function parseProtocol(value: string, where: string): Protocol {
  const v = value.trim();
  if ((PROTOCOLS as readonly string[]).includes(v)) return v as Protocol;
  throw usageError(`${where} ${JSON.stringify(value)} is not a supported protocol; use ${PROTOCOLS.join(' or ')}`);
}

/** A base endpoint plus `v1/<signal>`, as the specification says (one slash between them). */
export function signalUrl(base: URL, signal: Signal): string {
  const url = new URL(base.href);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/${signal}`;
  return url.href;
}

/** `k1=v1,k2=v2` with percent-encoded values (W3C Baggage style), as OTEL_*_HEADERS and OTEL_RESOURCE_ATTRIBUTES use. */
export function parseKeyValueList(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (text === undefined) return out;
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // not percent-encoded after all: keep it as written
    }
    if (key !== '') out[key] = value;
  }
  return out;
}

function configHeaders(config: ExportConfig): Record<string, string> {
  const h = config.headers;
  if (h === null || typeof h !== 'object' || Array.isArray(h)) return {};
  return Object.fromEntries(Object.entries(h as Record<string, unknown>).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
}

/** True when some endpoint is configured anywhere (flag, env, config). */
export function hasEndpoint(flags: ExportFlags, env: NodeJS.ProcessEnv, config: ExportConfig): boolean {
  return (
    nonEmpty(flags.endpoint) !== undefined ||
    nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT) !== undefined ||
    nonEmpty(env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT) !== undefined ||
    nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) !== undefined ||
    (typeof config.endpoint === 'string' && config.endpoint.trim() !== '')
  );
}

/**
 * Resolves both signals' targets. Throws a usage error for a bad URL or protocol, or when no
 * endpoint is configured at all.
 */
export function resolveTarget(flags: ExportFlags, env: NodeJS.ProcessEnv, config: ExportConfig): ExportTarget {
  const flagEndpoint = nonEmpty(flags.endpoint);
  const flagProtocol = nonEmpty(flags.protocol);
  const configEndpoint = typeof config.endpoint === 'string' ? nonEmpty(config.endpoint) : undefined;
  const configProtocol = typeof config.protocol === 'string' ? nonEmpty(config.protocol) : undefined;
  const baseWhere =
    flagEndpoint !== undefined
      ? '--endpoint'
      : nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT) !== undefined
        ? 'OTEL_EXPORTER_OTLP_ENDPOINT'
        : 'export.endpoint in config.json';
  const baseText = flagEndpoint ?? nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT) ?? configEndpoint;
  const base = baseText === undefined ? undefined : parseEndpoint(baseText, baseWhere);
  const commonHeaders = { ...configHeaders(config), ...parseKeyValueList(env.OTEL_EXPORTER_OTLP_HEADERS) };

  const target = (signal: Signal): SignalTarget => {
    const name = SIGNAL_VAR[signal];
    let url: string;
    const perSignal = nonEmpty(env[`OTEL_EXPORTER_OTLP_${name}_ENDPOINT`]);
    if (flagEndpoint === undefined && perSignal !== undefined) url = parseEndpoint(perSignal, `OTEL_EXPORTER_OTLP_${name}_ENDPOINT`).href;
    else if (base !== undefined) url = signalUrl(base, signal);
    else {
      throw usageError(
        `no OTLP endpoint: pass --endpoint ${'http://127.0.0.1:4318'}, set OTEL_EXPORTER_OTLP_ENDPOINT, or put "export": {"endpoint": "..."} in .forge/config.json`,
      );
    }
    const protocolVar = `OTEL_EXPORTER_OTLP_${name}_PROTOCOL`;
    const protocol =
      flagProtocol !== undefined
        ? parseProtocol(flagProtocol, '--protocol')
        : nonEmpty(env[protocolVar]) !== undefined
          ? parseProtocol(env[protocolVar] as string, protocolVar)
          : nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL) !== undefined
            ? parseProtocol(env.OTEL_EXPORTER_OTLP_PROTOCOL as string, 'OTEL_EXPORTER_OTLP_PROTOCOL')
            : configProtocol !== undefined
              ? parseProtocol(configProtocol, 'export.protocol in config.json')
              : 'http/protobuf';
    const headers = { ...commonHeaders, ...parseKeyValueList(env[`OTEL_EXPORTER_OTLP_${name}_HEADERS`]) };
    return { url, protocol, headers };
  };

  return { logs: target('logs'), traces: target('traces'), resource: resolveResource(env) };
}

/** OTEL_RESOURCE_ATTRIBUTES, with OTEL_SERVICE_NAME (or forge-reflect) as service.name. */
export function resolveResource(env: NodeJS.ProcessEnv): Record<string, string> {
  const resource = parseKeyValueList(env.OTEL_RESOURCE_ATTRIBUTES);
  resource['service.name'] = nonEmpty(env.OTEL_SERVICE_NAME) ?? resource['service.name'] ?? DEFAULT_SERVICE_NAME;
  return resource;
}

/** Only the protocol check, for `--dry-run` without an endpoint. */
export function checkFlagsOnly(flags: ExportFlags): void {
  if (nonEmpty(flags.endpoint) !== undefined) parseEndpoint(flags.endpoint as string, '--endpoint');
  if (nonEmpty(flags.protocol) !== undefined) parseProtocol(flags.protocol as string, '--protocol');
}
