// `export`: its options and examples; the run is export.ts, imported only when the command runs.
import { flag, text, texts, type CommandSpec } from './options.js';

export const exportCommand: CommandSpec = {
  command: 'export',
  describe: 'Send new sidecars, events and turns to an OpenTelemetry collector (OTLP/HTTP), each record once',
  builder: (y) =>
    y
      .option(
        'endpoint',
        text('OTLP/HTTP base URL; /v1/logs and /v1/traces are appended (default $OTEL_EXPORTER_OTLP_ENDPOINT, else export.endpoint in .forge/config.json)'),
      )
      .option('protocol', text('http/protobuf or http/json (default $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)'))
      .option('since', text('only records at or after this time (ISO-8601, or 30m, 2h, 7d)'))
      .option('dir', texts('sidecar folder; repeatable (default as for report)'))
      .option('timeout', text('time budget in seconds for the whole export, retries included (default 30)'))
      .option('batch-size', text('records per request (default 500)'))
      .option('dry-run', flag('count what would be sent; send and mark nothing'))
      .option('json', flag('print the counts as JSON')),
  examples: [
    ['$0 export --endpoint http://127.0.0.1:4318', 'send everything new to a local collector (protobuf)'],
    [
      'OTEL_EXPORTER_OTLP_ENDPOINT=https://otel.example.com OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20xyz $0 export --json',
      'the standard variables, counts as JSON',
    ],
    ['$0 export --dry-run --since 7d', 'what the last week would send'],
  ],
  load: async () => (await import('./export.js')).run,
};
