/**
 * A scripted mock of the Gemini API as Gemini CLI 0.61.0 calls it: the router's classifier
 * (`…:generateContent`, answered with a JSON complexity score) and the agent's steps
 * (`…:streamGenerateContent?alt=sse`). The step to answer is the number of function responses the
 * request's contents already carry.
 */
import type { ServerResponse } from 'node:http';
import { type RecordedRequest, type Route, writeSse } from './mock-server.js';

export type GeminiPart = { text: string } | { functionCall: { name: string; args: Record<string, unknown> } };
export type GeminiTurn = GeminiPart[];

interface GenerateRequest {
  contents?: { role?: string; parts?: Record<string, unknown>[] }[];
}

export function functionResponseCount(request: GenerateRequest): number {
  let count = 0;
  for (const content of request.contents ?? []) for (const part of content.parts ?? []) if (part && 'functionResponse' in part) count++;
  return count;
}

const USAGE = { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 };

export function geminiRoute(script: GeminiTurn[]): Route {
  return (request: RecordedRequest, res: ServerResponse) => {
    if (request.method !== 'POST' || !/^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)/.test(request.path)) return false;
    const body = JSON.parse(request.body) as GenerateRequest;
    if (request.path.includes(':generateContent')) {
      // The router's complexity classifier: a JSON answer in the shape its response schema asks for.
      const text = JSON.stringify({ reasoning: 'a scripted step', complexity_score: 10 });
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }], usageMetadata: USAGE }));
      return true;
    }
    const parts = script[functionResponseCount(body)] ?? [{ text: 'done' }];
    writeSse(res, [{ data: { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: USAGE } }]);
    return true;
  };
}
