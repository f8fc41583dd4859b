import Link from 'next/link';
import type { ReactNode } from 'react';

/** The centred link under an auth form, after an optional lead-in ("New here?"). */
export function AuthFooterLink({ href, lead, children }: { href: string; lead?: ReactNode; children: ReactNode }) {
  const link = (
    <Link href={href} className="font-medium text-indigo-600 hover:text-indigo-500">
      {children}
    </Link>
  );
  if (lead === undefined) return <p className="text-center text-sm">{link}</p>;
  return (
    <p className="text-center text-sm text-slate-500">
      {lead} {link}
    </p>
  );
}
