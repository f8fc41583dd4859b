import Link from 'next/link';
import type { FirstRunState } from '@/lib/dashboard/first-run';
import { Card, CardBody, CardHeader } from '@/components/ui/card';

/** Create a key, add credit, make a first call: each step ticks itself from what the account has done. */
export function FirstRunChecklist({ state, origin }: { state: FirstRunState; origin: string }) {
  const steps = [
    { done: state.hasKey, title: 'Create an API key', body: 'Keys are shown once; copy it somewhere safe.', href: '/dashboard/keys', action: 'Create a key' },
    { done: state.hasCredit, title: 'Add credit', body: 'Requests are prepaid; without credit they get 402.', href: '/dashboard/billing', action: 'Add credit' },
    {
      done: state.hasCall,
      title: 'Make your first call',
      body: `Point an OpenAI client at ${origin}/v1 with your key, or try the playground.`,
      href: '/dashboard/playground',
      action: 'Open the playground',
    },
  ];
  const doneCount = steps.filter((s) => s.done).length;
  return (
    <Card className="mb-4 sm:mb-6" data-testid="first-run">
      <CardHeader title="Get started" description={`${doneCount} of ${steps.length} done`} />
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
                  <span className="sr-only">{s.done ? ' (done)' : ' (to do)'}</span>
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
