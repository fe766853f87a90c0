/** Named rate-limit periods (SEED-SPEC "Named periods"); 0 is the concurrency cap. */
const aliases: Readonly<Record<string, number>> = {
  minute: 60,
  minutes: 60,
  min: 60,
  minutely: 60,
  hour: 3600,
  hours: 3600,
  hourly: 3600,
  day: 86_400,
  days: 86_400,
  daily: 86_400,
  concurrent: 0,
  concurrency: 0,
};

/** Seconds for a period name (case-insensitive, aliases allowed), or null. */
export function periodSecondsOf(name: string): number | null {
  return aliases[name.trim().toLowerCase()] ?? null;
}

/** `concurrent`, `minute`, `hour`, `day`, or `<n>s`. */
export function periodLabel(periodSeconds: number): string {
  if (periodSeconds === 0) return 'concurrent';
  if (periodSeconds === 60) return 'minute';
  if (periodSeconds === 3600) return 'hour';
  if (periodSeconds === 86_400) return 'day';
  return `${periodSeconds}s`;
}
