import { NextResponse, type NextRequest } from 'next/server';

// Dashboard and console pages learn the path they were asked for (layouts are not told it), so a
// signed-out visit to a deep link comes back to it after login. Only /dashboard and /admin run here.
export const DASHBOARD_PATH_HEADER = 'x-dashboard-path';

export function proxy(req: NextRequest) {
  const headers = new Headers(req.headers);
  headers.set(DASHBOARD_PATH_HEADER, `${req.nextUrl.pathname}${req.nextUrl.search}`);
  return NextResponse.next({ request: { headers } });
}

export const config = { matcher: ['/dashboard', '/dashboard/:path*', '/admin', '/admin/:path*'] };
