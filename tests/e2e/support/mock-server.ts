/**
 * A loopback HTTP server for the real-client suite: it records every request and answers the ones
 * a route claims; any other request is a violation (the clients must contact nothing but the mock
 * of their model API). Bound to 127.0.0.1 on a free port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** Answers a request it claims (returns true), or leaves it (false). */
export type Route = (request: RecordedRequest, response: ServerResponse) => boolean;

export interface MockServer {
  url: string;
  requests: RecordedRequest[];
  violations: RecordedRequest[];
  close(): Promise<void>;
}

export async function startMockServer(routes: Route[]): Promise<MockServer> {
  const requests: RecordedRequest[] = [];
  const violations: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(recorded);
      for (const route of routes) {
        try {
          if (route(recorded, res)) return;
        } catch (error) {
          violations.push({ ...recorded, body: `route failed: ${(error as Error).message}\n${recorded.body.slice(0, 2000)}` });
          res.writeHead(500).end();
          return;
        }
      }
      violations.push(recorded);
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not mocked"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    violations,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Writes a Server-Sent Events response: one `event:`/`data:` pair per item. */
export function writeSse(res: ServerResponse, events: { event?: string; data: unknown }[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'close' });
  for (const e of events) res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`);
  res.end();
}
