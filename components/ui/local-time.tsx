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
 * A moment in the viewer's own time zone, with UTC on hover. The server cannot know the zone, so
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
