import { describe, expect, it } from 'vitest';
import { UserError } from '../src/errors.js';
import { parseKeyValueList, resolveTarget, signalUrl } from '../src/export/otlp-config.js';
import { autoExportEnabled } from '../src/export/auto.js';

describe("OTLP configuration (the specification's rules)", () => {
  it('a base endpoint gets v1/<signal> appended to its path, with one slash', () => {
    expect(signalUrl(new URL('http://c:4318'), 'logs')).toBe('http://c:4318/v1/logs');
    expect(signalUrl(new URL('http://c:4318/'), 'traces')).toBe('http://c:4318/v1/traces');
    expect(signalUrl(new URL('https://c/otlp/'), 'logs')).toBe('https://c/otlp/v1/logs');
    expect(signalUrl(new URL('https://c/otlp?x=1'), 'logs')).toBe('https://c/otlp/v1/logs?x=1');
  });

  it('per-signal endpoints are exact; the flag beats env beats config; protocol per signal', () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://env:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/t',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
    };
    const t = resolveTarget({}, env, { endpoint: 'http://config:4318', protocol: 'http/protobuf' });
    expect(t.logs).toMatchObject({ url: 'http://env:4318/v1/logs', protocol: 'http/json' });
    expect(t.traces).toMatchObject({ url: 'http://traces:9999/t', protocol: 'http/protobuf' });
    const f = resolveTarget({ endpoint: 'http://flag:1', protocol: 'http/json' }, env, {});
    expect([f.logs.url, f.traces.url, f.traces.protocol]).toEqual(['http://flag:1/v1/logs', 'http://flag:1/v1/traces', 'http/json']);
    const c = resolveTarget({}, {}, { endpoint: 'http://config:4318', headers: { 'x-k': 'v' } });
    expect([c.logs.url, c.logs.protocol, c.logs.headers]).toEqual(['http://config:4318/v1/logs', 'http/protobuf', { 'x-k': 'v' }]);
  });

  it('headers and resource attributes: k=v lists, percent-decoded; per-signal headers add to the common ones', () => {
    expect(parseKeyValueList('a=1, b = x%20y ,bad,=v,c=%E2%9C%93')).toEqual({ a: '1', b: 'x y', c: '✓' });
    const t = resolveTarget({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://e', OTEL_EXPORTER_OTLP_HEADERS: 'a=1,b=2', OTEL_EXPORTER_OTLP_LOGS_HEADERS: 'b=3' }, {});
    expect(t.logs.headers).toEqual({ a: '1', b: '3' });
    expect(t.traces.headers).toEqual({ a: '1', b: '2' });
    expect(
      resolveTarget({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://e', OTEL_RESOURCE_ATTRIBUTES: 'service.name=x,team=y', OTEL_SERVICE_NAME: 'svc' }, {}).resource,
    ).toEqual({ 'service.name': 'svc', team: 'y' });
    expect(resolveTarget({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://e', OTEL_RESOURCE_ATTRIBUTES: 'service.name=x' }, {}).resource['service.name']).toBe('x');
  });

  it('bad endpoints and protocols are usage errors (exit 2) naming the valid forms', () => {
    const usage = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        expect(error).toBeInstanceOf(UserError);
        expect((error as UserError).exitCode).toBe(2);
        return (error as Error).message;
      }
      throw new Error('no error');
    };
    expect(usage(() => resolveTarget({ endpoint: 'localhost:4318' }, {}, {}))).toMatch(/not an http\(s\) URL; give an http:\/\/ or https:\/\/ URL/);
    expect(usage(() => resolveTarget({}, { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: '::', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://e' }, {}))).toMatch(
      /OTEL_EXPORTER_OTLP_LOGS_ENDPOINT "::" is not a URL/,
    );
    expect(usage(() => resolveTarget({}, {}, { endpoint: 'http://c', protocol: 'grpc' }))).toMatch(
      /export.protocol in config.json "grpc" is not a supported protocol; use http\/protobuf or http\/json/,
    );
  });

  it('automatic export: config endpoint, or env endpoint with FORGE_EXPORT=on; FORGE_EXPORT=off wins', () => {
    expect(autoExportEnabled({ endpoint: 'http://c' }, {})).toBe(true);
    expect(autoExportEnabled({ endpoint: 'http://c' }, { FORGE_EXPORT: 'off' })).toBe(false);
    expect(autoExportEnabled({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://e' })).toBe(false);
    expect(autoExportEnabled({}, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://e', FORGE_EXPORT: 'on' })).toBe(true);
    expect(autoExportEnabled({}, { FORGE_EXPORT: 'on' })).toBe(false);
  });
});
