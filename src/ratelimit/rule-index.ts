import type { RateLimitRule } from './rules.ts';

export interface RouteSubject {
  userPath: string;
  /** The provider instance the request resolved to; absent for route-less requests (batches). */
  provider?: string;
  /** The bare model id executed. */
  model?: string;
}

/**
 * Rules indexed for matching (SEED-SPEC "Matching and counting"), case-insensitively: path
 * rules by path, looked up for the request path and each ancestor; provider rules by
 * instance; model rules by bare or `<instance>/<model>` subject.
 */
export class RuleIndex {
  readonly size: number;
  private readonly paths = new Map<string, RateLimitRule[]>();
  private readonly providers = new Map<string, RateLimitRule[]>();
  private readonly models = new Map<string, RateLimitRule[]>();

  constructor(rules: Iterable<RateLimitRule>) {
    let size = 0;
    for (const rule of rules) {
      const map = rule.scope === 'user_path' ? this.paths : rule.scope === 'provider' ? this.providers : this.models;
      const key = rule.subject.toLowerCase();
      map.set(key, [...(map.get(key) ?? []), rule]);
      size += 1;
    }
    this.size = size;
  }

  /** Every rule that applies to the request, optionally without its route or path rules. */
  match(subject: RouteSubject, routeRules = true, pathRules = true): RateLimitRule[] {
    if (this.size === 0) return [];
    const found: RateLimitRule[] = [];
    if (pathRules && this.paths.size > 0) this.matchPath(subject.userPath.toLowerCase(), found);
    if (routeRules) found.push(...this.matchRoute(subject));
    return found;
  }

  /** Provider and model rules only: what decides whether a target has capacity. */
  matchRoute(subject: Omit<RouteSubject, 'userPath'>): RateLimitRule[] {
    const found: RateLimitRule[] = [];
    const provider = subject.provider?.toLowerCase();
    if (provider === undefined) return found;
    found.push(...(this.providers.get(provider) ?? []));
    const model = subject.model?.toLowerCase();
    if (model !== undefined && this.models.size > 0) {
      found.push(...(this.models.get(model) ?? []), ...(this.models.get(`${provider}/${model}`) ?? []));
    }
    return found;
  }

  private matchPath(path: string, found: RateLimitRule[]): void {
    found.push(...(this.paths.get('/') ?? []));
    for (let slash = path.indexOf('/', 1); slash !== -1; slash = path.indexOf('/', slash + 1)) {
      found.push(...(this.paths.get(path.slice(0, slash)) ?? []));
    }
    if (path !== '/') found.push(...(this.paths.get(path) ?? []));
  }
}
