// Budget alerts of projects and organization members (docs/decisions/056): the account's thresholds
// fire once per threshold per month for a project's and a member's monthly budget, whatever number
// of evaluations (of any number of instances) find the crossing; they read in en and zh-CN, and a
// budget re-set below the spend fires nothing new.

import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { logRecord } from '../support/log-record';
import { getDb } from '@/lib/db';
import { closeLogWriter, enqueueLog, flushLogs } from '@/lib/billing/writer';
import { usdToPico } from '@/lib/money';
import { closeEvents } from '@/lib/events';
import { evaluateAlerts } from '@/lib/alerts/evaluate';
import { listAlertEvents } from '@/lib/alerts/events';
import { saveAlertSettings } from '@/lib/alerts/settings';
import { renderMessage } from '@/lib/i18n/codes';

afterAll(async () => {
  await closeLogWriter();
  await closeEvents();
});

/** An organization with `member` as a developer with a monthly budget, a budgeted project and the member's key in it. */
async function setup(owner: TestAccount, member: TestAccount) {
  const db = await getDb();
  const orgId = randomUUID();
  await db.user.create({ data: { id: orgId, email: `org-${orgId}@organizations.invalid`, passwordHash: '!organization', tier: 'pro' } });
  await db.organization.create({ data: { id: orgId, name: 'Acme' } });
  await db.membership.create({ data: { orgId, userId: owner.userId, role: 'owner' } });
  await db.membership.create({ data: { orgId, userId: member.userId, role: 'developer', monthlyBudgetUsd: '10' } });
  const project = await db.project.create({ data: { userId: orgId, name: 'Search', monthlyBudgetUsd: '20' } });
  const key = await db.apiKey.create({
    data: { userId: orgId, name: 'm', hash: randomUUID(), prefix: 'sk-gw-', lastFour: 'abcd', createdById: member.userId, projectId: project.id },
  });
  await saveAlertSettings(orgId, { thresholds: [80, 100] });
  return { orgId, projectId: project.id, keyId: key.id };
}

async function spend(orgId: string, keyId: string, projectId: string, memberId: string, usd: string): Promise<void> {
  enqueueLog(
    logRecord(orgId, {
      createdAt: new Date(),
      apiKeyId: keyId,
      projectId,
      memberId,
      modelRequested: null,
      modelServed: null,
      channel: null,
      promptTokens: 0,
      completionTokens: 0,
      costPico: usdToPico(usd),
      costCnyPico: 0n,
    }),
  );
  await flushLogs();
}

const summary = (events: Awaited<ReturnType<typeof listAlertEvents>>) => events.map((e) => `${e.type} ${String(e.data.threshold_percent)}`).sort();

describe('project and member budget alerts', () => {
  it('fire once per threshold per month, in en and zh-CN, and not again when the budget is set below the spend', async () => {
    const owner = await createAccount();
    const member = await createAccount();
    const { orgId, projectId, keyId } = await setup(owner, member);

    // $7: 70% of the member's $10, 35% of the project's $20: nothing yet.
    await spend(orgId, keyId, projectId, member.userId, '7');
    await evaluateAlerts();
    expect(await listAlertEvents(orgId)).toEqual([]);

    // $8.5: the member's 80%; $16.5 later the project's 80% and the member's 100%.
    await spend(orgId, keyId, projectId, member.userId, '1.5');
    // Evaluations racing each other (as two instances would) record the crossing once.
    await Promise.all([evaluateAlerts(), evaluateAlerts(), evaluateAlerts()]);
    expect(summary(await listAlertEvents(orgId))).toEqual(['member.budget.threshold 80']);

    await spend(orgId, keyId, projectId, member.userId, '8');
    await evaluateAlerts();
    await evaluateAlerts();
    const events = await listAlertEvents(orgId);
    expect(summary(events)).toEqual(['member.budget.threshold 100', 'member.budget.threshold 80', 'project.budget.threshold 80']);

    const project = events.find((e) => e.type === 'project.budget.threshold')!;
    expect(project.data.project).toEqual({ id: projectId, name: 'Search' });
    expect(project.message).toMatch(/^Project "Search" has used 80% of its monthly budget \(\d{4}-\d{2}\): \$16\.50 of \$20\.00\.$/);
    expect(renderMessage('zh-CN', project)).toContain('项目“Search”已用掉');
    const m100 = events.find((e) => e.type === 'member.budget.threshold' && e.data.threshold_percent === 100)!;
    expect(m100.data.member).toEqual({ id: member.userId, email: member.email });
    expect(m100.message).toContain(`Member ${member.email} has used 100% of their monthly budget`);
    expect(renderMessage('zh-CN', m100)).toContain(`成员 ${member.email} 已用掉`);
    // No webhook is set: the events are for the dashboard list only.
    expect(events.every((e) => e.delivery.status === 'not_sent')).toBe(true);

    // Lowered below the spend: the thresholds not yet alerted are reached now (100%), the one alerted
    // at this spend (80%) is not news. Re-set to exactly the spend: nothing new. Raised: re-armed.
    const db = await getDb();
    await db.project.update({ where: { id: projectId }, data: { monthlyBudgetUsd: '5' } });
    await evaluateAlerts();
    const lowered = summary(await listAlertEvents(orgId));
    expect(lowered).toEqual(['member.budget.threshold 100', 'member.budget.threshold 80', 'project.budget.threshold 100', 'project.budget.threshold 80']);
    await db.project.update({ where: { id: projectId }, data: { monthlyBudgetUsd: '16.5' } });
    await evaluateAlerts();
    expect(summary(await listAlertEvents(orgId))).toEqual(lowered);
    await db.project.update({ where: { id: projectId }, data: { monthlyBudgetUsd: '100' } });
    await spend(orgId, keyId, projectId, member.userId, '63.5');
    await evaluateAlerts();
    await evaluateAlerts();
    expect(summary(await listAlertEvents(orgId))).toEqual([...lowered, 'project.budget.threshold 80'].sort());
  });
});
