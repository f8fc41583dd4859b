'use client';

import { useEffect, useState } from 'react';

const utcText = (d: Date) => `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;

function localText(d: Date): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(d)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
}

/**
 * A moment in the viewer's own time zone (every page uses it; TimeZoneNote names the zone), with UTC on hover. The server cannot know the zone, so
 * the first paint (and the server's HTML) says UTC and the browser switches it once hydrated.
 */
export function LocalTime({ iso, className }: { iso: string; className?: string }) {
  const date = new Date(iso);
  const [text, setText] = useState(utcText(date));
  useEffect(() => setText(localText(new Date(iso))), [iso]);
  return (
    <time dateTime={iso} title={utcText(date)} className={className}>
      {text}
    </time>
  );
}

/**
 * "Times are in Asia/Shanghai …": the zone every LocalTime on the page is shown in. `template`
 * comes translated from the server with a `{zone}` placeholder (so this needs no phrase book).
 */
export function TimeZoneNote({ template }: { template: string }) {
  const [zone, setZone] = useState<string | null>(null);
  useEffect(() => {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
    setZone(zone);
    // The server reads days in this zone (the usage page's ranges): it cannot know it otherwise.
    if (!document.cookie.split('; ').includes(`tz=${encodeURIComponent(zone)}`)) {
      document.cookie = `tz=${encodeURIComponent(zone)}; path=/; max-age=31536000; samesite=lax`;
    }
  }, []);
  return (
    <p className="mt-8 text-xs text-slate-500" data-testid="time-zone">
      {template.replace('{zone}', zone ?? 'UTC')}
    </p>
  );
}
