/**
 * A scripted mock of OpenAI's Responses API as Codex CLI 0.169.0 calls it (`POST /v1/responses`,
 * `stream: true`; `GET /v1/models` answered with an empty list). A script is the list of model turns;
 * the turn to answer is the number of tool outputs the request's input already carries.
 */
import type { ServerResponse } from 'node:http';
import { type RecordedRequest, type Route, writeSse } from './mock-server.js';

export type CodexItem = { type: 'message'; text: string } | { type: 'shell'; command: string } | { type: 'patch'; patch: string };
export type CodexTurn = CodexItem[];

interface ResponsesRequest {
  model?: string;
  input?: { type?: string }[];
}

export function toolOutputCount(request: ResponsesRequest): number {
  return (request.input ?? []).filter((item) => item?.type === 'function_call_output' || item?.type === 'custom_tool_call_output').length;
}

function outputItem(item: CodexItem, turn: number, i: number): Record<string, unknown> {
  const callId = `call_${turn}_${i}`;
  if (item.type === 'message') {
    return {
      type: 'message',
      id: `msg_${turn}_${i}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: item.text, annotations: [] }],
    };
  }
  if (item.type === 'shell') {
    return {
      type: 'function_call',
      id: `fc_${turn}_${i}`,
      status: 'completed',
      call_id: callId,
      name: 'exec_command',
      arguments: JSON.stringify({ cmd: item.command }),
    };
  }
  return { type: 'custom_tool_call', id: `ctc_${turn}_${i}`, status: 'completed', call_id: callId, name: 'apply_patch', input: item.patch };
}

export function responsesRoute(script: CodexTurn[]): Route {
  return (request: RecordedRequest, res: ServerResponse) => {
    if (request.method === 'GET' && request.path.startsWith('/v1/models')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[],"models":[]}');
      return true;
    }
    if (request.method !== 'POST' || !request.path.startsWith('/v1/responses')) return false;
    const body = JSON.parse(request.body) as ResponsesRequest;
    const turn = toolOutputCount(body);
    const items = script[turn] ?? [{ type: 'message', text: 'done' }];
    const id = `resp_mock_${turn}`;
    const response = { id, object: 'response', status: 'in_progress', model: body.model ?? 'gpt-5.5', output: [] };
    const events: { event: string; data: unknown }[] = [{ event: 'response.created', data: { type: 'response.created', sequence_number: 0, response } }];
    const output = items.map((item, i) => outputItem(item, turn, i));
    output.forEach((item, i) => {
      events.push({ event: 'response.output_item.added', data: { type: 'response.output_item.added', output_index: i, item } });
      events.push({ event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index: i, item } });
    });
    const usage = {
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 120,
    };
    events.push({ event: 'response.completed', data: { type: 'response.completed', response: { ...response, status: 'completed', output, usage } } });
    writeSse(res, events);
    return true;
  };
}
