import Link from 'next/link';
import type { FirstRunState } from '@/lib/dashboard/first-run';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import type { Messages } from '@/lib/i18n/messages';

/** Create a key, add credit, make a first call: each step ticks itself from what the account has done. */
export function FirstRunChecklist({ state, origin, t }: { state: FirstRunState; origin: string; t: Messages['firstRun'] }) {
  const steps = [
    { done: state.hasKey, ...t.key, href: '/dashboard/keys' },
    { done: state.hasCredit, ...t.credit, href: '/dashboard/billing' },
    { done: state.hasCall, ...t.call, body: t.call.body(`${origin}/v1`), href: '/dashboard/playground' },
  ];
  const doneCount = steps.filter((s) => s.done).length;
  return (
    <Card className="mb-4 sm:mb-6" data-testid="first-run">
      <CardHeader title={t.title} description={t.done(doneCount, steps.length)} />
      <CardBody>
        <ol className="grid gap-3 sm:grid-cols-3">
          {steps.map((s, i) => (
            <li key={s.title} className="flex gap-3" data-testid="first-run-step" data-done={s.done ? 'true' : 'false'}>
              <span
                aria-hidden="true"
                className={`mt-0.5 flex h-6 w-6 shrink-0 items-center justify-center rounded-full text-xs font-semibold ${s.done ? 'bg-emerald-600 text-white' : 'border border-slate-300 text-slate-600'}`}
              >
                {s.done ? '✓' : i + 1}
              </span>
              <div className="min-w-0 text-sm">
                <p className={`font-medium ${s.done ? 'text-slate-600 line-through' : 'text-slate-900'}`}>
                  {s.title}
                  <span className="sr-only">{s.done ? t.doneMark : t.todoMark}</span>
                </p>
                {!s.done && (
                  <>
                    <p className="mt-0.5 break-words text-slate-600">{s.body}</p>
                    <Link href={s.href} className="mt-1 inline-block font-medium text-indigo-700 hover:text-indigo-600">
                      {s.action} →
                    </Link>
                  </>
                )}
              </div>
            </li>
          ))}
        </ol>
      </CardBody>
    </Card>
  );
}
