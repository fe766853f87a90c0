// Declarations for the undici modules the upstream client imports directly: loading
// `undici`'s index also loads fetch, WebSocket, caches and mocks, which the gateway never uses
// (about 10 ms and 9 MB at start-up). The types are undici's own.
declare module 'undici/lib/dispatcher/pool.js' {
  import { Pool } from 'undici';
  export = Pool;
}

declare module 'undici/lib/core/errors.js' {
  import { errors } from 'undici';
  export = errors;
}

declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';
  /** `Dispatcher.prototype.request`, which undici's index installs on every dispatcher. */
  function request(this: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  export = request;
}

declare module 'undici/lib/core/util.js' {
  /** Raw header pairs (`[name, value, ...]`) as an object with lower-cased names, repeated names as arrays. */
  export function parseHeaders(headers: readonly (Buffer | string)[]): Record<string, string | string[]>;
  /** A raw header name, lower-cased (known names from a lookup tree). */
  export function headerNameToString(name: Buffer | string): string;
}
