import { describe, expect, it } from 'vitest';
import type { EventRow } from '../src/events.js';
import { eventLog, hrTimeOf, turnSpans } from '../src/export/records.js';

const resource = { attributes: { 'service.name': 'forge-reflect' } };
const row = (id: string, ts: string, type: EventRow['type'], extra: Partial<EventRow> = {}): EventRow => ({
  id,
  session_id: 's1',
  agent_id: null,
  ts,
  runtime: 'claude-code',
  type,
  hook_event: null,
  tool_name: null,
  tool_use_id: null,
  duration_ms: null,
  cwd: null,
  payload: '{}',
  truncated: 0,
  ...extra,
});

describe('OTLP records', () => {
  it("keeps the log's microseconds in the time", () => {
    expect(hrTimeOf('2026-11-22T10:15:00.123456Z')).toEqual([Date.parse('2026-11-22T10:15:00Z') / 1000, 123_456_000]);
    expect(hrTimeOf('2026-11-22T10:15:00Z')).toEqual([Date.parse('2026-11-22T10:15:00Z') / 1000, 0]);
  });

  it('a turn: ids derive from the record ids (a resend is the same span); tool spans end at the event and last duration_ms', () => {
    const stop = row('003', '2026-11-22T10:00:10.000000Z', 'turn.stopped');
    const events = [
      row('001', '2026-11-22T10:00:01.000000Z', 'prompt.submitted'),
      row('002', '2026-11-22T10:00:05.500000Z', 'tool.failed', { tool_name: 'Edit', duration_ms: 1500, payload: '{"tool_input":{"file_path":"src/a.ts"}}' }),
      row('004', '2026-11-22T10:00:06.000000Z', 'tool.executed', { tool_name: 'Bash', duration_ms: null }),
    ];
    const a = turnSpans({ stop, events }, resource);
    const b = turnSpans({ stop, events }, resource);
    expect(a.map((s) => s.spanContext())).toEqual(b.map((s) => s.spanContext()));
    expect(a).toHaveLength(2); // the Bash call has no duration: no span
    const [turn, tool] = a;
    expect(turn?.attributes).toMatchObject({ 'forge_reflect.record_id': 'turn:003', 'forge_reflect.tool_calls': 2, 'session.id': 's1' });
    expect(turn?.startTime).toEqual(hrTimeOf('2026-11-22T10:00:01.000000Z'));
    expect(tool?.parentSpanContext?.spanId).toBe(turn?.spanContext().spanId);
    expect(tool?.startTime).toEqual(hrTimeOf('2026-11-22T10:00:04.000000Z'));
    expect(tool?.status.code).toBe(2);
    expect(tool?.attributes).toMatchObject({ 'gen_ai.tool.name': 'Edit', 'code.file.path': 'src/a.ts', 'forge_reflect.record_id': 'tool:002' });
    expect(eventLog(events[1] as EventRow, resource, [0, 0]).severityText).toBe('ERROR');
  });
});
