import { describe, expect, it } from 'vitest';
import { McpRequestGuard } from './request-guard.ts';

const guard = (listenHost: string, allowedHosts: string[] = [], allowedOrigins: string[] = []): McpRequestGuard =>
  new McpRequestGuard({ listenHost, allowedHosts, allowedOrigins });

describe('MCP Host and Origin checks (DNS rebinding)', () => {
  it('on loopback: loopback names at any port, the listed hosts, nothing else', () => {
    const loopback = guard('127.0.0.1', ['gateway.internal', 'proxy.example:8443']);
    for (const host of ['127.0.0.1:4000', 'localhost', 'LOCALHOST:80', '[::1]:4000', 'gateway.internal:9', 'proxy.example:8443']) {
      expect(loopback.hostAllowed(host), host).toBe(true);
    }
    for (const host of ['evil.example.com', 'evil.example.com:4000', '127.0.0.2:4000', 'proxy.example:9', '', undefined]) {
      expect(loopback.hostAllowed(host), String(host)).toBe(false);
    }
    expect(guard('::1').hostAllowed('[::1]:4000')).toBe(true);
    expect(guard('localhost').hostAllowed('127.0.0.1:4000')).toBe(true);
  });

  it('on a specific address: that address and the listed hosts; on every interface: only once hosts are listed', () => {
    expect(guard('10.0.0.5').hostAllowed('10.0.0.5:4000')).toBe(true);
    expect(guard('10.0.0.5').hostAllowed('localhost:4000')).toBe(false);
    expect(guard('0.0.0.0').hostAllowed('anything.example')).toBe(true);
    expect(guard('0.0.0.0', ['gateway.example.com']).hostAllowed('anything.example')).toBe(false);
    expect(guard('0.0.0.0', ['gateway.example.com']).hostAllowed('gateway.example.com:443')).toBe(true);
    expect(guard('127.0.0.1', ['*']).hostAllowed('evil.example.com')).toBe(true);
  });

  it('allows loopback origins by default only while listening on loopback', () => {
    const loopback = guard('127.0.0.1', [], ['https://app.example']);
    for (const origin of ['http://localhost:3000', 'http://127.0.0.1:8080', 'https://[::1]', 'https://app.example/']) {
      expect(loopback.originAllowed(origin), origin).toBe(true);
    }
    for (const origin of ['http://evil.example.com', 'http://localhost.evil.example', 'null', 'file://localhost/x']) {
      expect(loopback.originAllowed(origin), origin).toBe(false);
    }
    expect(guard('0.0.0.0').originAllowed('http://localhost:3000')).toBe(false);
    expect(guard('0.0.0.0', [], ['*']).originAllowed('http://evil.example.com')).toBe(true);
  });
});
