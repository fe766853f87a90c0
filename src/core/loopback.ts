/**
 * Loopback names and addresses (RFC 6761 section 6.3, RFC 1122 section 3.2.1.3, RFC 4291):
 * `localhost` and names under `.localhost`, `127.0.0.0/8` written as four decimal octets,
 * `::1` (and `::ffff:127.x.y.z`). Used for the `Host` of a request in open mode (a DNS
 * rebinding page sends its own name there) and for the address the gateway binds.
 */
const ipv4Loopback = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** Whether `host` (a name or an address, without port; IPv6 with or without brackets) is loopback. */
export function isLoopbackHost(host: string): boolean {
  let name = host.trim().toLowerCase();
  if (name.startsWith('[') && name.endsWith(']')) name = name.slice(1, -1);
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name === 'localhost' || name.endsWith('.localhost')) return name.length <= 253;
  if (name === '::1' || name === '0:0:0:0:0:0:0:1') return true;
  const mapped = /^::ffff:(.+)$/.exec(name);
  return isIpv4Loopback(mapped?.[1] ?? name);
}

function isIpv4Loopback(address: string): boolean {
  const octets = ipv4Loopback.exec(address);
  return octets !== null && octets.slice(1).every((octet) => Number(octet) <= 255);
}

/**
 * Whether an HTTP `Host` header (`name[:port]`, `[v6]:port`) names a loopback host. A missing
 * or malformed header is not loopback.
 */
export function isLoopbackHostHeader(header: string | undefined): boolean {
  if (header === undefined) return false;
  const value = header.trim();
  if (value.startsWith('[')) {
    const close = value.indexOf(']');
    if (close === -1 || !/^(:\d{1,5})?$/.test(value.slice(close + 1))) return false;
    return isLoopbackHost(value.slice(0, close + 1));
  }
  const colon = value.indexOf(':');
  if (colon !== -1 && !/^\d{1,5}$/.test(value.slice(colon + 1))) return false;
  return isLoopbackHost(colon === -1 ? value : value.slice(0, colon));
}
