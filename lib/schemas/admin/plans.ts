import { z } from 'zod';
import { route } from '../route';

// Plans as the console edits them. A plan's fields are the operator config's (lib/config/schema.ts
// validates them when saved, naming the field); this schema only says it is an object.

const planParam = z.object({ id: z.string().min(1).max(64) });

export const planSave = z.record(z.string(), z.unknown()).meta({ description: "a plan's fields as the operator config writes them" });
export const planAction = z.object({ action: z.enum(['retire', 'offer', 'reset']) }).strict();

export const adminPlans = {
  list: route({
    method: 'GET',
    path: '/api/admin/plans',
    auth: 'admin',
    summary: 'Every plan (config and console), where it is defined, whether retired, and its live subscribers',
  }),
  save: route({
    method: 'PUT',
    path: '/api/admin/plans/{id}',
    auth: 'admin',
    summary: "Save a plan (replaces the config's plan of that id or adds one)",
    params: planParam,
    body: planSave,
  }),
  act: route({
    method: 'POST',
    path: '/api/admin/plans/{id}',
    auth: 'admin',
    summary: "Stop offering it, offer it again, or drop the console's edits",
    params: planParam,
    body: planAction,
  }),
};
