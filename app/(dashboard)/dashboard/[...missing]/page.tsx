import { notFound } from 'next/navigation';

// Any /dashboard path no page answers: the dashboard's own 404, inside its layout.
export default function MissingDashboardPage() {
  notFound();
}
