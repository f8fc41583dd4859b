// The logs filter reads a bare day in the viewer's time zone (#40 item 8: one time zone, the user's,
// on every page): "2026-03-15" from Shanghai is 16:00 UTC the day before, to the next local midnight.
import { describe, expect, it } from 'vitest';
import { parseLogFilters, zonedMidnight } from '@/lib/dashboard/filters';
import { GatewayError } from '@/lib/errors';

const q = (s: string) => new URLSearchParams(s);

describe('log filter days in the viewer’s zone', () => {
  it('reads from/to as local days of tz', () => {
    const f = parseLogFilters(q('from=2026-03-15&to=2026-03-15&tz=Asia/Shanghai'));
    expect(f.from!.toISOString()).toBe('2026-03-14T16:00:00.000Z');
    expect(f.to!.toISOString()).toBe('2026-03-15T16:00:00.000Z');
  });
  it('keeps UTC days without tz (the API’s default)', () => {
    const f = parseLogFilters(q('from=2026-03-15&to=2026-03-15'));
    expect(f.from!.toISOString()).toBe('2026-03-15T00:00:00.000Z');
    expect(f.to!.toISOString()).toBe('2026-03-16T00:00:00.000Z');
  });
  it('follows daylight saving: a New York day across the spring change is 23 hours', () => {
    const f = parseLogFilters(q('from=2026-03-08&to=2026-03-08&tz=America/New_York'));
    expect(f.from!.toISOString()).toBe('2026-03-08T05:00:00.000Z');
    expect(f.to!.toISOString()).toBe('2026-03-09T04:00:00.000Z');
    expect(zonedMidnight('2026-11-02', 'America/New_York').toISOString()).toBe('2026-11-02T05:00:00.000Z');
  });
  it('an explicit timestamp is not moved by tz', () => {
    const f = parseLogFilters(q('from=2026-03-15T10:00:00Z&tz=Asia/Kolkata'));
    expect(f.from!.toISOString()).toBe('2026-03-15T10:00:00.000Z');
  });
  it('refuses an unknown zone with a 400 naming tz', () => {
    for (const tz of ['Mars/Olympus', 'Asia/Shanghai;drop', 'x'.repeat(80)]) {
      let err: unknown;
      try {
        parseLogFilters(q(`from=2026-03-15&tz=${encodeURIComponent(tz)}`));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).status).toBe(400);
      expect((err as GatewayError).param).toBe('tz');
    }
  });
  it('the end of 9999 in any zone stays queryable', () => {
    const f = parseLogFilters(q('to=9999-12-31&tz=Asia/Shanghai'));
    expect(f.to!.getTime()).toBeLessThanOrEqual(Date.UTC(9999, 11, 31, 23, 59, 59, 999));
  });
});
