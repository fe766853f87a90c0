import type { BudgetService } from '../budgets/budget-service.ts';
import { noReservation, type BudgetReservation } from '../budgets/reservation.ts';
import { noAdmission, type Admission as Slots, type AdmissionRequest, type RateLimiter } from '../ratelimit/rate-limiter.ts';
import { mergeRateLimitHeaders, RateLimitRejection } from '../ratelimit/rejection.ts';
import type { ResolvedTarget } from '../routing/resolve-model.ts';
import { Admission } from './admission.ts';

export interface AdmissionDependencies {
  /** Null when rate limits are off. */
  limiter: RateLimiter | null;
  /** Null when budgets are off. */
  budgets: BudgetService | null;
}

/** Prices the request's largest cost on a target (null: unknown). */
export type CostOf = (target: ResolvedTarget) => number | null;

const unknownCost: CostOf = () => null;

/**
 * A route plan's admission while its attempts are made. The first admitted attempt takes the
 * user-path and route rules together (so a breach reports the rule that blocks longest) and
 * reserves the budget; later attempts take only their route rules, the user-path slots held
 * across them and the budget hold moved to each target tried (the executed one pays).
 */
export class PlanAdmission {
  private readonly userPath: string;
  private readonly dependencies: AdmissionDependencies;
  private readonly costOf: CostOf;
  /** The request's own (user-path) slots, once the first attempt was admitted. */
  private path: Slots | null = null;
  private reservation: BudgetReservation | null = null;

  constructor(userPath: string, dependencies: AdmissionDependencies, costOf: CostOf = unknownCost) {
    this.userPath = userPath;
    this.dependencies = dependencies;
    this.costOf = costOf;
  }

  /**
   * The target's route slots; a saturated target that is not the last gives its refusal (the
   * last one's is thrown). At once, without a promise, when nothing counts, holds or refuses it.
   */
  admit(target: ResolvedTarget, last: boolean): Slots | RateLimitRejection | Promise<Slots | RateLimitRejection> {
    const limiter = this.dependencies.limiter;
    const path = this.path;
    if (limiter !== null) {
      const subject = { userPath: this.userPath, provider: target.adapter.name, model: target.model };
      if (limiter.matches(subject, path === null ? undefined : { pathRules: false })) return this.admitting(target, last);
    }
    if (path !== null) {
      this.follow(target, path, undefined);
      return noAdmission;
    }
    if (this.dependencies.budgets?.covers(this.userPath) === true) return this.admitting(target, last);
    this.follow(target, noAdmission, noReservation);
    return noAdmission;
  }

  /** The executed target's admission: the request's slots and hold, the target's slots and in-flight count. */
  executed(route: Slots, leave: () => void): Admission {
    const path = this.path ?? noAdmission;
    return new Admission(mergeRateLimitHeaders(path.headers, route.headers), path, this.reservation ?? noReservation, route, leave);
  }

  /** Nothing executed: a request every target's rules refused leaves nothing counted; any other failure releases. */
  abandon(error: unknown): void {
    const path = this.path;
    const reservation = this.reservation ?? noReservation;
    if (path === null) return;
    if (!(error instanceof RateLimitRejection)) return new Admission(path.headers, path, reservation).release();
    path.refund();
    reservation.release();
  }

  private async admitting(target: ResolvedTarget, last: boolean): Promise<Slots | RateLimitRejection> {
    const limiter = this.dependencies.limiter;
    const path = this.path;
    const subject = { userPath: this.userPath, provider: target.adapter.name, model: target.model };
    try {
      if (path !== null) {
        const route = (await limiter?.admit(subject, { pathRules: false })) ?? noAdmission;
        this.follow(target, path, undefined);
        return route;
      }
      const parts = ((await limiter?.admit(subject)) ?? noAdmission).split();
      this.follow(target, parts.path, await this.reserve(target, parts.path, parts.route));
      return parts.route;
    } catch (error) {
      if (!(error instanceof RateLimitRejection) || error.scope === 'user_path' || last) throw error;
      if (path !== null) {
        this.follow(target, path, undefined);
        return error;
      }
      // This target is saturated: count the request on its user path alone, and move on.
      const own = (await limiter?.admit(subject, { routeRules: false })) ?? noAdmission;
      this.follow(target, own, await this.reserve(target, own));
      return error;
    }
  }

  /** The executed target pays: the hold taken at the first admission follows each target tried. */
  private follow(target: ResolvedTarget, path: Slots, reservation: BudgetReservation | undefined): void {
    this.path = path;
    const current = this.reservation;
    if (current === null) this.reservation = reservation ?? null;
    else if (current !== noReservation) current.move(this.costOf(target) ?? 0);
  }

  private reserve(target: ResolvedTarget, ...slots: Slots[]): Promise<BudgetReservation> {
    return reserveBudget(this.userPath, this.dependencies, () => this.costOf(target), slots);
  }
}

/** The budget reservation of a request (budget.reserve), undoing `slots` when it is refused. */
async function reserveBudget(
  userPath: string,
  dependencies: AdmissionDependencies,
  cost: () => number | null,
  slots: readonly Slots[],
): Promise<BudgetReservation> {
  try {
    return (await dependencies.budgets?.reserve(userPath, cost)) ?? noReservation;
  } catch (error) {
    for (const taken of slots) taken.refund();
    throw error;
  }
}

/**
 * Admission for a request that is not a planned model call (a batch submission, a passthrough
 * call): the rules of its user path and of the route it names (`request` says which, and
 * whether slots are held), then its budget reservation, the same as a planned call's
 * (`cost`: the request's largest cost, null or absent: refused once spent, nothing held).
 * The caller releases the admission when done; that gives the hold back a turn later, after
 * the usage report.
 */
export async function admitRequest(
  userPath: string,
  dependencies: AdmissionDependencies,
  route: { provider?: string; model?: string },
  request: AdmissionRequest = {},
  cost: () => number | null = () => null,
): Promise<Admission> {
  // Fields set on a literal: in V8 11 a spread followed by a field costs about a microsecond (ADR 27).
  const subject = { provider: route.provider, model: route.model, userPath };
  const slots = (await dependencies.limiter?.admit(subject, request)) ?? noAdmission;
  if (dependencies.budgets?.covers(userPath) !== true) return new Admission(slots.headers, slots, noReservation);
  return new Admission(slots.headers, slots, await reserveBudget(userPath, dependencies, cost, [slots]));
}
