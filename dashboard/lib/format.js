// Formatting of numbers, money and times for people (the browser's locale).

const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const compactNumber = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const shortDay = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const shortHour = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

/** 12,345 (or an em dash for null). */
export function count(value) {
  return value === null || value === undefined ? '—' : integer.format(value);
}

/** 12.3K for axis labels. */
export function compact(value) {
  return compactNumber.format(value);
}

/** Dollars with enough digits to show small spends: $0.0042, $12.50. */
export function dollars(value) {
  if (value === null || value === undefined) return '—';
  const digits = value !== 0 && Math.abs(value) < 1 ? 4 : 2;
  return `$${value.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: digits })}`;
}

export function when(iso) {
  return iso ? dateTime.format(new Date(iso)) : '—';
}

/** An axis label for a bucket start: the hour for hourly buckets, the UTC day otherwise. */
export function bucketLabel(epochMs, bucket) {
  return bucket === 'hour' ? shortHour.format(new Date(epochMs)) : shortDay.format(new Date(epochMs));
}

/** "in 42 s", "in 3 min", "2 h ago", from a difference in milliseconds. */
export function relative(milliseconds) {
  const future = milliseconds >= 0;
  const seconds = Math.round(Math.abs(milliseconds) / 1000);
  const text =
    seconds < 90
      ? `${seconds} s`
      : seconds < 5400
        ? `${Math.round(seconds / 60)} min`
        : seconds < 172_800
          ? `${Math.round(seconds / 3600)} h`
          : `${Math.round(seconds / 86_400)} d`;
  return future ? `in ${text}` : `${text} ago`;
}

/** A rule's period for people: minute, hour, day, concurrent, or 90 s. */
export function period(rule) {
  if (rule.period_seconds === 0) return 'concurrent';
  return /^\d+s$/.test(rule.period) ? `${rule.period_seconds} s window` : rule.period;
}
