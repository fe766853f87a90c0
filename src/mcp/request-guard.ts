import { isIP } from 'node:net';

import { isLoopbackHost } from '../core/loopback.ts';

// DNS rebinding protection of /mcp (MCP transport spec, "Security Warning"; ADR 0034): a page in a
// browser must not reach the gateway's MCP sessions through a name that resolves to it (Host), nor
// drive them from another site (Origin).

const loopbackNames = ['localhost', '127.0.0.1', '[::1]'];

export interface McpRequestGuardOptions {
  /** The address the gateway listens on (HOST). */
  readonly listenHost: string;
  /** MCP_ALLOWED_ORIGINS, canonical (lower case, no trailing slash), or `*`. */
  readonly allowedOrigins: readonly string[];
  /** MCP_ALLOWED_HOSTS: names (`gateway.example.com`, any port) or `name:port`, lower case, or `*`. */
  readonly allowedHosts: readonly string[];
}

function isWildcardAddress(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === '' || bare === '0.0.0.0' || bare === '::';
}

/** `[::1]` for `::1`, the name itself otherwise (the form a Host header carries). */
function hostForm(address: string): string {
  return isIP(address) === 6 ? `[${address.toLowerCase()}]` : address.toLowerCase();
}

/** `host` without its port, lower case (`[::1]:8080` -> `[::1]`). */
function hostnameOf(host: string): string {
  const value = host.trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(0, value.indexOf(']') + 1);
  return value.replace(/:\d*$/, '');
}

/**
 * Host: when the gateway listens on a loopback address, a request must name a loopback host
 * (`localhost`, `127.0.0.1`, `[::1]`, any port) or one MCP_ALLOWED_HOSTS lists; on a specific
 * address, that address or a listed one; on every interface (`0.0.0.0`, `::`) the names clients
 * use are unknown, so Host is checked only once MCP_ALLOWED_HOSTS lists some.
 *
 * Origin: requests without one (SDKs, curl) pass; a browser Origin must be listed in
 * MCP_ALLOWED_ORIGINS, or be a loopback origin while the gateway listens on loopback.
 */
export class McpRequestGuard {
  private readonly anyHost: boolean;
  private readonly hosts: ReadonlySet<string>;
  private readonly loopback: boolean;
  private readonly allowedOrigins: readonly string[];

  constructor(options: McpRequestGuardOptions) {
    this.loopback = isLoopbackHost(options.listenHost);
    const wildcard = isWildcardAddress(options.listenHost);
    this.anyHost = options.allowedHosts.includes('*') || (wildcard && options.allowedHosts.length === 0);
    const listening = wildcard ? [] : [hostForm(options.listenHost)];
    this.hosts = new Set([...options.allowedHosts, ...listening, ...(this.loopback ? loopbackNames : [])]);
    this.allowedOrigins = options.allowedOrigins;
  }

  hostAllowed(host: string | undefined): boolean {
    if (this.anyHost) return true;
    if (host === undefined || host.trim() === '') return false;
    return this.hosts.has(hostnameOf(host)) || this.hosts.has(host.trim().toLowerCase());
  }

  originAllowed(origin: string): boolean {
    if (this.allowedOrigins.includes('*')) return true;
    if (this.allowedOrigins.includes(origin.replace(/\/+$/, '').toLowerCase())) return true;
    if (!this.loopback) return false;
    try {
      const url = new URL(origin);
      return (url.protocol === 'http:' || url.protocol === 'https:') && loopbackNames.includes(url.hostname.toLowerCase());
    } catch {
      return false;
    }
  }
}
