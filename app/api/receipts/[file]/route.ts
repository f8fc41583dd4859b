// GET /api/receipts/:paymentId.pdf - the receipt of one paid Stripe recharge of the acting account
import { apiRoute, requireUserId } from '@/lib/http/api';
import { receiptResponse } from '@/lib/statements/respond';

export const GET = apiRoute<{ file: string }>(async (req, _ctx, params) => receiptResponse(await requireUserId(req), params.file));
