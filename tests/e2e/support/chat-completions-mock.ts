/**
 * A scripted mock of OpenAI's Chat Completions API (`POST /v1/chat/completions`, streamed), the API
 * Copilot CLI (provider `openai`), Qwen Code, opencode (`@ai-sdk/openai-compatible`) and Cline
 * (`openai-compatible`) call. A script is the list of model turns; by default the turn to answer is
 * the number of tool results the request's messages already carry. `GET /v1/models` gets an empty list.
 */
import type { ServerResponse } from 'node:http';
import type { RecordedRequest, Route } from './mock-server.js';

export type ChatItem = { type: 'text'; text: string } | { type: 'tool'; name: string; args: Record<string, unknown> };
export type ChatTurn = ChatItem[];

export interface ChatRequest {
  model?: string;
  stream?: boolean;
  messages?: { role?: string; content?: unknown }[];
}

export function toolResultCount(request: ChatRequest): number {
  return (request.messages ?? []).filter((m) => m?.role === 'tool').length;
}

function chunk(id: string, model: string, delta: Record<string, unknown>, finish: string | null): Record<string, unknown> {
  return { id, object: 'chat.completion.chunk', created: 1_767_000_000, model, choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** The turn's chunks: text first, then each tool call in one delta, then the finish and usage. */
export function turnChunks(items: ChatTurn, turn: number, model: string): Record<string, unknown>[] {
  const id = `chatcmpl_mock_${turn}`;
  const out = [chunk(id, model, { role: 'assistant', content: '' }, null)];
  for (const item of items) if (item.type === 'text') out.push(chunk(id, model, { content: item.text }, null));
  const calls = items.filter((i): i is Extract<ChatItem, { type: 'tool' }> => i.type === 'tool');
  calls.forEach((call, i) => {
    const toolCall = { index: i, id: `call_mock_${turn}_${i}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } };
    out.push(chunk(id, model, { tool_calls: [toolCall] }, null));
  });
  out.push(chunk(id, model, {}, calls.length > 0 ? 'tool_calls' : 'stop'));
  out.push({
    id,
    object: 'chat.completion.chunk',
    created: 1_767_000_000,
    model,
    choices: [],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  });
  return out;
}

export interface ChatRouteOptions {
  /** Which script turn answers a request (default: its tool-result count). */
  turnOf?: (request: ChatRequest, raw: RecordedRequest) => number;
  /** Turns past the script answer with this text. */
  fallback?: string;
}

export function chatCompletionsRoute(script: ChatTurn[], options: ChatRouteOptions = {}): Route {
  return (request: RecordedRequest, res: ServerResponse) => {
    if (request.method === 'GET' && /\/models(\?|$)/.test(request.path)) {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
      return true;
    }
    if (request.method !== 'POST' || !request.path.endsWith('/chat/completions')) return false;
    const body = JSON.parse(request.body) as ChatRequest;
    const turn = (options.turnOf ?? toolResultCount)(body, request);
    const items = script[turn] ?? [{ type: 'text', text: options.fallback ?? 'done' }];
    const model = body.model ?? 'mock-model';
    const chunks = turnChunks(items, turn, model);
    if (body.stream === false) {
      const text = items.flatMap((i) => (i.type === 'text' ? [i.text] : [])).join('');
      const calls = items.flatMap((i, n) =>
        i.type === 'tool' ? [{ id: `call_mock_${turn}_${n}`, type: 'function', function: { name: i.name, arguments: JSON.stringify(i.args) } }] : [],
      );
      const message = { role: 'assistant', content: text, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
      const finish = calls.length > 0 ? 'tool_calls' : 'stop';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `chatcmpl_mock_${turn}`,
          object: 'chat.completion',
          created: 1_767_000_000,
          model,
          choices: [{ index: 0, message, finish_reason: finish }],
          usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
        }),
      );
      return true;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'close' });
    for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
    res.end('data: [DONE]\n\n');
    return true;
  };
}
