import { noReservation, type BudgetReservation } from '../budgets/reservation.ts';
import type { Admission as Slots } from '../ratelimit/rate-limiter.ts';

/**
 * What an admitted request holds, in one object: its rate-limit headers, its concurrency
 * slots (the user path's, and the executed target's with its in-flight count) and its budget
 * hold. `release()` gives everything back once, however often it is called: the slots at once
 * (before the answer's last bytes, ClientAbort.whenClosed), the hold a turn later, after the
 * usage report that a stream relay makes once it has ended the response (the hold and the
 * charge overlap for a moment rather than leave a gap, reservation.ts).
 */
export class Admission {
  readonly headers: Readonly<Record<string, string>>;
  private readonly path: Slots;
  private readonly route: Slots | null;
  private readonly reservation: BudgetReservation;
  private readonly leave: (() => void) | null;
  private released = false;

  constructor(
    headers: Readonly<Record<string, string>>,
    path: Slots,
    reservation: BudgetReservation,
    route: Slots | null = null,
    leave: (() => void) | null = null,
  ) {
    this.headers = headers;
    this.path = path;
    this.reservation = reservation;
    this.route = route;
    this.leave = leave;
  }

  /** Bound: handed as it is to `whenClosed`. */
  readonly release = (): void => {
    if (this.released) return;
    this.released = true;
    this.leave?.();
    this.route?.release();
    this.path.release();
    const reservation = this.reservation;
    if (reservation !== noReservation) setImmediate(() => reservation.release());
  };
}
