import { request as httpRequest } from 'node:http';

// Raw HTTP for the MCP transport suites (mcp-transport, mcp-resume): exact headers, Host included,
// and SSE bodies read only as far as a test needs.

export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** A raw HTTP request with exactly these headers (Host included), reading the body until `until` matches or the end. */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; until?: RegExp },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method: options.method ?? 'POST', headers: options.headers }, (incoming) => {
      let text = '';
      const finish = (): void => resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, text });
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk: string) => {
        text += chunk;
        if (options.until?.test(text) === true) {
          incoming.destroy();
          finish();
        }
      });
      incoming.on('end', finish);
    });
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}
