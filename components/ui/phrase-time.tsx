import { LocalTime } from '@/components/ui/local-time';

/**
 * A translated phrase with a `{at}` placeholder left unfilled (`t('Posted {at} by {who}', { who })`)
 * and the moment put in its place in the viewer's zone: the word order stays the language's own.
 */
export function PhraseTime({ text, at, className }: { text: string; at: Date; className?: string }) {
  const [before, after = ''] = text.split('{at}');
  return (
    <>
      {before}
      <LocalTime iso={at.toISOString()} className={className} />
      {after}
    </>
  );
}
