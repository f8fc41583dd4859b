import Link from 'next/link';
import { Card } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';

export default function DashboardNotFound() {
  return (
    <Card>
      <EmptyState title="Not found">
        <p>It does not exist, or it belongs to another account.</p>
        <Link href="/dashboard" className="mt-2 inline-block text-indigo-600 hover:text-indigo-500">
          Back to the overview
        </Link>
      </EmptyState>
    </Card>
  );
}
