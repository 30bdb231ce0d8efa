/**
 * A scripted mock of Anthropic's Messages API as Claude Code 2.1.330 calls it
 * (`POST /v1/messages?beta=true`, `stream: true`). A script is the list of assistant turns of one
 * session; the turn to answer is chosen by how many tool results the request already carries, so
 * the mock is stateless and a retried request gets the same answer.
 */
import type { ServerResponse } from 'node:http';
import { type RecordedRequest, type Route, writeSse } from './mock-server.js';

export type AssistantBlock = { type: 'text'; text: string } | { type: 'tool_use'; name: string; input: Record<string, unknown> };
export type AssistantTurn = AssistantBlock[];

interface MessagesRequest {
  model?: string;
  tools?: unknown[];
  messages?: { role: string; content: unknown }[];
}

/** Tool results in the conversation so far: the index of the next turn. */
export function toolResultCount(request: MessagesRequest): number {
  let count = 0;
  for (const message of request.messages ?? []) {
    if (message.role !== 'user' || !Array.isArray(message.content)) continue;
    for (const block of message.content as { type?: string }[]) if (block?.type === 'tool_result') count++;
  }
  return count;
}

function sseFor(turn: AssistantTurn, model: string, index: number): { event: string; data: unknown }[] {
  const id = `msg_mock${String(index).padStart(6, '0')}`;
  const events: { event: string; data: unknown }[] = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 1 },
        },
      },
    },
  ];
  turn.forEach((block, i) => {
    if (block.type === 'text') {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index: i, content_block: { type: 'text', text: '' } } });
      events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index: i, delta: { type: 'text_delta', text: block.text } } });
    } else {
      const toolId = `toolu_mock${String(index).padStart(4, '0')}${String(i).padStart(2, '0')}`;
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index: i, content_block: { type: 'tool_use', id: toolId, name: block.name, input: {} } },
      });
      events.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index: i, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } },
      });
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index: i } });
  });
  const stop = turn.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  events.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } } });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

/** The route answering the main loop's streaming calls from `script`; past its end, a plain "done". */
export function anthropicRoute(script: AssistantTurn[]): Route {
  return (request: RecordedRequest, res: ServerResponse) => {
    if (request.method !== 'POST' || !request.path.startsWith('/v1/messages')) return false;
    if (request.path.startsWith('/v1/messages/count_tokens')) return false;
    const body = JSON.parse(request.body) as MessagesRequest;
    const index = toolResultCount(body);
    const turn = script[index] ?? [{ type: 'text', text: 'done' }];
    writeSse(res, sseFor(turn, body.model ?? 'claude-mock', index));
    return true;
  };
}

/**
 * A route answering the main loop's calls with an API error (`status`, Anthropic's error body)
 * from the `fromTurn`th turn on (counted as in anthropicRoute); earlier calls are left to the
 * routes after it.
 */
export function anthropicErrorRoute(status: number, errorType: string, message: string, fromTurn = 0): Route {
  return (request: RecordedRequest, res: ServerResponse) => {
    if (request.method !== 'POST' || !request.path.startsWith('/v1/messages')) return false;
    if (request.path.startsWith('/v1/messages/count_tokens')) return false;
    if (toolResultCount(JSON.parse(request.body) as MessagesRequest) < fromTurn) return false;
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: errorType, message } }));
    return true;
  };
}
