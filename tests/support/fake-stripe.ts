// A small Stripe test double for the built gateway (STRIPE_API_BASE, docs/decisions/049): the API
// subset lib/billing/stripe.ts and lib/plans/stripe.ts call, in Stripe's wire format (form-encoded
// requests, JSON objects of Stripe's shapes), plus the two pages Stripe hosts for the browser:
//
// - GET /checkout/:session: "pays" a Checkout. In subscription mode it creates the customer (unless
//   the session named one) and the subscription, then sends the gateway, signed with its webhook
//   secret, `checkout.session.completed` and `invoice.paid`; in payment mode (a recharge) just
//   `checkout.session.completed`, paid. Then it redirects to the session's success_url.
// - GET /portal/:session: the billing portal, a page listing the customer's live subscriptions with
//   "Cancel plan" (cancel_at_period_end: `customer.subscription.updated`) and "Cancel now"
//   (`customer.subscription.deleted`); either redirects to the session's return_url.
//
// A webhook the gateway does not answer 2xx makes the page answer 502 with the gateway's reply, so
// a browser test fails at the step that broke.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';

type Obj = Record<string, unknown>;
type Sub = Obj & {
  id: string;
  customer: string;
  status: string;
  cancel_at_period_end: boolean;
  metadata: Record<string, string>;
  items: Obj & { data: Obj[] };
};

export interface FakeStripe {
  url: string;
  /** Where events go (the gateway's /api/payment/webhook) and the secret they are signed with. */
  setWebhook(url: string, secret: string): void;
  /** Every API request, in order: `POST /v1/checkout/sessions` and its decoded form body. */
  requests: { method: string; path: string; body: Obj }[];
  /** Every event sent, with the gateway's status. */
  events: { type: string; id: string; status: number }[];
  subscriptions: Map<string, Sub>;
  close(): Promise<void>;
}

const DAY_S = 86_400;
const id = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('hex')}`;
const now = () => Math.floor(Date.now() / 1000);

/** Stripe's form encoding back into objects: `a[b][0][c]=v` → {a: {b: [{c: v}]}}. */
export function decodeForm(text: string): Obj {
  const out: Obj = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const parts = key.split(/[[\]]+/).filter(Boolean);
    let node: Obj | unknown[] = out;
    parts.forEach((part, i) => {
      const last = i === parts.length - 1;
      const slot = Array.isArray(node) ? Number(part) : part;
      const holder = node as Record<string | number, unknown>;
      if (last) holder[slot] = value;
      else {
        if (holder[slot] === undefined) holder[slot] = /^\d+$/.test(parts[i + 1]) ? [] : {};
        node = holder[slot] as Obj | unknown[];
      }
    });
  }
  return out;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** `prices`: the unit amount in cents of each price id the operator config names (what invoices charge). */
export async function startFakeStripe(opts: { prices: Record<string, number> }): Promise<FakeStripe> {
  const requests: FakeStripe['requests'] = [];
  const events: FakeStripe['events'] = [];
  const customers = new Map<string, Obj>();
  const sessions = new Map<string, Obj>();
  const portals = new Map<string, Obj>();
  const subscriptions = new Map<string, Sub>();
  let webhook: { url: string; secret: string } | null = null;
  let base = '';

  const price = (priceId: string) => {
    const amount = opts.prices[priceId];
    if (amount === undefined) return null;
    return {
      id: priceId,
      object: 'price',
      active: true,
      currency: 'usd',
      unit_amount: amount,
      type: 'recurring',
      recurring: { interval: 'month', interval_count: 1 },
    };
  };

  function newCustomer(fields: Obj = {}): Obj {
    const c = { id: id('cus'), object: 'customer', created: now(), livemode: false, email: null, metadata: {}, ...fields };
    customers.set(c.id as string, c);
    return c;
  }

  async function send(type: string, object: Obj, previous?: Obj): Promise<{ ok: boolean; status: number; text: string }> {
    if (!webhook) throw new Error('fake stripe: setWebhook was not called');
    const event = {
      id: id('evt'),
      object: 'event',
      api_version: Stripe.API_VERSION,
      created: now(),
      data: previous ? { object, previous_attributes: previous } : { object },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    };
    const payload = JSON.stringify(event);
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: webhook.secret });
    const res = await fetch(webhook.url, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload });
    const text = await res.text();
    events.push({ type, id: event.id, status: res.status });
    return { ok: res.ok, status: res.status, text };
  }

  /** Sends events in order; the first the gateway refuses ends the page with its answer. */
  async function sendAll(res: http.ServerResponse, list: [string, Obj, Obj?][], then: string): Promise<void> {
    for (const [type, object, previous] of list) {
      const r = await send(type, object, previous);
      if (!r.ok) return page(res, 502, `<h1>Webhook ${escapeHtml(type)} failed</h1><pre>${r.status} ${escapeHtml(r.text)}</pre>`);
    }
    res.writeHead(303, { location: then }).end();
  }

  function page(res: http.ServerResponse, status: number, body: string) {
    res
      .writeHead(status, { 'content-type': 'text/html; charset=utf-8' })
      .end(`<!doctype html><html lang="en"><head><title>Fake Stripe</title></head><body>${body}</body></html>`);
  }

  function apiError(res: http.ServerResponse, status: number, message: string, param?: string) {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') });
    res.end(JSON.stringify({ error: { type: 'invalid_request_error', message, ...(param ? { param } : {}) } }));
  }

  function ok(res: http.ServerResponse, body: unknown) {
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': id('req') }).end(JSON.stringify(body));
  }

  /** The subscription a paid Checkout creates, one item per line, the period a month from now. */
  function subscriptionFor(session: Obj, customer: string): Sub {
    const start = now();
    const lineItems = (session.line_items as Obj[] | undefined) ?? [];
    const sub: Sub = {
      id: id('sub'),
      object: 'subscription',
      customer,
      status: 'active',
      cancel_at_period_end: false,
      cancel_at: null,
      canceled_at: null,
      ended_at: null,
      created: start,
      start_date: start,
      currency: 'usd',
      livemode: false,
      collection_method: 'charge_automatically',
      metadata: ((session.subscription_data as Obj | undefined)?.metadata as Record<string, string>) ?? {},
      items: {
        object: 'list',
        has_more: false,
        data: lineItems.map((li) => ({
          id: id('si'),
          object: 'subscription_item',
          price: price(li.price as string),
          quantity: Number(li.quantity ?? 1),
          current_period_start: start,
          current_period_end: start + 30 * DAY_S,
        })),
      },
    };
    subscriptions.set(sub.id, sub);
    return sub;
  }

  function invoiceFor(sub: Sub): Obj {
    const lines = sub.items.data.map((item) => {
      const p = item.price as { unit_amount: number };
      return {
        id: id('il'),
        object: 'line_item',
        amount: p.unit_amount * (item.quantity as number),
        currency: 'usd',
        period: { start: item.current_period_start, end: item.current_period_end },
        pricing: { type: 'price_details', price_details: { price: (item.price as Obj).id } },
      };
    });
    const total = lines.reduce((n, l) => n + l.amount, 0);
    const invoiceId = id('in');
    return {
      id: invoiceId,
      object: 'invoice',
      customer: sub.customer,
      status: 'paid',
      billing_reason: 'subscription_create',
      currency: 'usd',
      amount_due: total,
      amount_paid: total,
      amount_remaining: 0,
      total,
      number: `FAKE-${invoiceId.slice(-6).toUpperCase()}`,
      hosted_invoice_url: `${base}/invoice/${invoiceId}`,
      livemode: false,
      created: now(),
      parent: { type: 'subscription_details', quote_details: null, subscription_details: { subscription: sub.id, metadata: sub.metadata } },
      lines: { object: 'list', has_more: false, data: lines },
    };
  }

  async function api(req: http.IncomingMessage, res: http.ServerResponse, path: string, body: Obj) {
    const m = req.method ?? 'GET';
    if (!/^Bearer sk_/.test(req.headers.authorization ?? '')) return apiError(res, 401, 'Invalid API Key provided');
    let match: RegExpMatchArray | null;
    if (m === 'POST' && path === '/v1/customers') return ok(res, newCustomer({ email: body.email ?? null, metadata: body.metadata ?? {} }));
    if (m === 'GET' && (match = path.match(/^\/v1\/customers\/([^/]+)$/))) {
      const c = customers.get(match[1]);
      return c ? ok(res, c) : apiError(res, 404, `No such customer: '${match[1]}'`, 'id');
    }
    if (m === 'POST' && path === '/v1/checkout/sessions') {
      if (body.mode !== 'subscription' && body.mode !== 'payment') return apiError(res, 400, 'This fake sells subscriptions and one-off payments only', 'mode');
      const lineItems = (body.line_items as Obj[] | undefined) ?? [];
      // A subscription's lines name configured prices; a payment's carry price_data (the recharge's amount).
      const unitAmount = (li: Obj) =>
        body.mode === 'payment' ? Number((li.price_data as Obj | undefined)?.unit_amount ?? NaN) : (price(li.price as string)?.unit_amount ?? NaN);
      if (!lineItems.length || lineItems.some((li) => !Number.isSafeInteger(unitAmount(li)))) return apiError(res, 400, 'No such price', 'line_items');
      if (typeof body.success_url !== 'string') return apiError(res, 400, 'Missing required param: success_url.', 'success_url');
      if (body.customer && !customers.has(body.customer as string)) return apiError(res, 400, `No such customer: '${body.customer}'`, 'customer');
      const sid = id('cs');
      const session: Obj = {
        id: sid,
        object: 'checkout.session',
        mode: body.mode,
        status: 'open',
        payment_status: 'unpaid',
        customer: body.customer ?? null,
        subscription: null,
        client_reference_id: body.client_reference_id ?? null,
        metadata: body.metadata ?? {},
        success_url: body.success_url,
        cancel_url: body.cancel_url ?? null,
        currency: 'usd',
        amount_total: lineItems.reduce((n, li) => n + unitAmount(li) * Number(li.quantity ?? 1), 0),
        livemode: false,
        created: now(),
        expires_at: now() + DAY_S,
        url: `${base}/checkout/${sid}`,
        // Kept for the subscription the payment creates; Stripe does not echo these on the session.
        line_items: lineItems,
        subscription_data: body.subscription_data ?? {},
      };
      sessions.set(sid, session);
      const { line_items: _l, subscription_data: _s, ...wire } = session;
      return ok(res, wire);
    }
    if ((match = path.match(/^\/v1\/subscriptions\/([^/]+)$/))) {
      const sub = subscriptions.get(match[1]);
      if (!sub) return apiError(res, 404, `No such subscription: '${match[1]}'`, 'id');
      if (m === 'GET') return ok(res, sub);
      if (m === 'POST') {
        for (const change of (body.items as Obj[] | undefined) ?? []) {
          const item = sub.items.data.find((i) => i.id === change.id);
          const p = change.price ? price(change.price as string) : null;
          if (!item || (change.price && !p)) return apiError(res, 400, 'No such subscription item or price', 'items');
          if (p) item.price = p;
        }
        if (body.metadata) sub.metadata = { ...sub.metadata, ...(body.metadata as Record<string, string>) };
        if (body.cancel_at_period_end !== undefined) sub.cancel_at_period_end = body.cancel_at_period_end === 'true';
        return ok(res, sub);
      }
    }
    if (m === 'POST' && path === '/v1/billing_portal/sessions') {
      if (typeof body.customer !== 'string' || !customers.has(body.customer)) return apiError(res, 400, `No such customer: '${body.customer}'`, 'customer');
      const pid = id('bps');
      const session = {
        id: pid,
        object: 'billing_portal.session',
        customer: body.customer,
        return_url: body.return_url ?? null,
        livemode: false,
        created: now(),
        url: `${base}/portal/${pid}`,
      };
      portals.set(pid, session);
      return ok(res, session);
    }
    return apiError(res, 404, `Unrecognized request URL (${m}: ${path}).`);
  }

  async function hosted(req: http.IncomingMessage, res: http.ServerResponse, path: string) {
    let match: RegExpMatchArray | null;
    if (req.method === 'GET' && (match = path.match(/^\/checkout\/([^/]+)$/))) {
      const session = sessions.get(match[1]);
      if (!session) return page(res, 404, '<h1>No such checkout</h1>');
      if (session.status !== 'open') return res.writeHead(303, { location: session.success_url as string }).end();
      if (session.mode === 'payment') {
        Object.assign(session, { status: 'complete', payment_status: 'paid', payment_intent: id('pi'), url: null });
        const { line_items: _l, subscription_data: _s, ...wire } = session;
        return sendAll(res, [['checkout.session.completed', wire]], session.success_url as string);
      }
      const customer = (session.customer as string | null) ?? (newCustomer().id as string);
      const sub = subscriptionFor(session, customer);
      Object.assign(session, { status: 'complete', payment_status: 'paid', customer, subscription: sub.id, url: null });
      const { line_items: _l, subscription_data: _s, ...wire } = session;
      return sendAll(
        res,
        [
          ['checkout.session.completed', wire],
          ['invoice.paid', invoiceFor(sub)],
        ],
        session.success_url as string,
      );
    }
    if ((match = path.match(/^\/portal\/([^/]+)$/))) {
      const portal = portals.get(match[1]);
      if (!portal) return page(res, 404, '<h1>No such portal session</h1>');
      const live = [...subscriptions.values()].filter((s) => s.customer === portal.customer && s.status !== 'canceled');
      if (req.method === 'GET') {
        const rows = live
          .map(
            (s) =>
              `<li data-testid="fake-portal-subscription">${escapeHtml(s.id)} (${escapeHtml(s.status)}${s.cancel_at_period_end ? ', cancels at period end' : ''})
<form method="post"><input type="hidden" name="subscription" value="${escapeHtml(s.id)}"><button name="when" value="period_end">Cancel plan</button> <button name="when" value="now">Cancel now</button></form></li>`,
          )
          .join('');
        return page(
          res,
          200,
          `<h1>Billing portal</h1><ul>${rows || '<li>No subscriptions</li>'}</ul><a href="${escapeHtml(String(portal.return_url))}">Return</a>`,
        );
      }
      if (req.method === 'POST') {
        const form = decodeForm(await readBody(req));
        const sub = live.find((s) => s.id === form.subscription);
        if (!sub) return page(res, 404, '<h1>No such subscription</h1>');
        if (form.when === 'now') {
          Object.assign(sub, { status: 'canceled', canceled_at: now(), ended_at: now(), cancel_at_period_end: false });
          return sendAll(res, [['customer.subscription.deleted', sub]], String(portal.return_url));
        }
        const end = Math.max(...sub.items.data.map((i) => i.current_period_end as number));
        Object.assign(sub, { cancel_at_period_end: true, cancel_at: end, canceled_at: now() });
        return sendAll(
          res,
          [['customer.subscription.updated', sub, { cancel_at_period_end: false, cancel_at: null, canceled_at: null }]],
          String(portal.return_url),
        );
      }
    }
    return page(res, 404, '<h1>Not found</h1>');
  }

  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    readBody(req)
      .then(async (text) => {
        if (path.startsWith('/v1/')) {
          const body = req.method === 'GET' ? decodeForm(new URL(req.url ?? '/', 'http://fake').search.slice(1)) : decodeForm(text);
          requests.push({ method: req.method ?? 'GET', path, body });
          return api(req, res, path, body);
        }
        // The portal's form body is read again by hosted(): hand it over.
        (req as unknown as { fakeBody: string }).fakeBody = text;
        return hosted(req, res, path);
      })
      .catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(err));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: base,
    setWebhook(url, secret) {
      webhook = { url, secret };
    },
    requests,
    events,
    subscriptions,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: http.IncomingMessage): Promise<string> {
  const cached = (req as unknown as { fakeBody?: string }).fakeBody;
  if (cached !== undefined) return Promise.resolve(cached);
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}
