'use client';

import { useEffect, useState, type ReactNode } from 'react';
import { cn } from './cn';

/**
 * The header's top bar, stuck to the top of the window. Once the page is scrolled it is marked
 * `data-compact` (a group: children shrink with `group-data-[compact]:`), so on a phone the bar
 * that stays on screen is a thin strip. Two thresholds, so the height change (which moves the
 * page by a few pixels) cannot flip it back and forth.
 */
export function StickyBar({ children, className }: { children: ReactNode; className?: string }) {
  const [compact, setCompact] = useState(false);
  useEffect(() => {
    const update = () => setCompact((was) => (was ? window.scrollY > 4 : window.scrollY > 24));
    update();
    window.addEventListener('scroll', update, { passive: true });
    return () => window.removeEventListener('scroll', update);
  }, []);
  return (
    <div data-compact={compact ? '' : undefined} data-testid="sticky-header" className={cn('group sticky top-0 z-20', className)}>
      {children}
    </div>
  );
}
