import type { IncomingHttpHeaders } from 'node:http';
import { cacheDirectives } from '../../cache/cache-key.ts';
import type { CacheMode } from '../../gateway/pipeline-dependencies.ts';

const noCache: CacheMode = Object.freeze({ lookup: false, store: false });

/** What the client's Cache-Control allows: `no-cache` skips the lookup, `no-store` both; nothing without a cache. */
export function cacheModeOf(headers: IncomingHttpHeaders, cacheEnabled: boolean): CacheMode {
  if (!cacheEnabled) return noCache;
  const directives = cacheDirectives(headers);
  return { lookup: !directives.noCache && !directives.noStore, store: !directives.noStore };
}
