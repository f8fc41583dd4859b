// npm run db:migrate — apply SQL migrations offline (PostgreSQL with DATABASE_URL, else embedded PGlite).
import { runMigrations } from '@/lib/db/migrate';
import { maintainPartitionsNow } from '@/lib/db/partitions';
import { env } from '@/lib/env';

const applied = await runMigrations();
// The request log's day partitions ahead, and its retention (lib/db/partitions.ts).
const partitions = await maintainPartitionsNow();
const target = env.DATABASE_URL ? 'PostgreSQL' : `embedded PGlite (${env.DATA_DIR})`;
console.log(applied.length ? `applied ${applied.join(', ')} on ${target}` : `database up to date (${target})`);
if (partitions.created.length || partitions.dropped.length)
  console.log(`request-log partitions: ${partitions.created.length} created, ${partitions.dropped.length} dropped (retention)`);
process.exit(0);
