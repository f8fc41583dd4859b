// npm run db:migrate — apply SQL migrations offline (PostgreSQL with DATABASE_URL, else embedded PGlite).
import { runMigrations } from '@/lib/db/migrate';
import { env } from '@/lib/env';

const applied = await runMigrations();
const target = env.DATABASE_URL ? 'PostgreSQL' : `embedded PGlite (${env.DATA_DIR})`;
console.log(applied.length ? `applied ${applied.join(', ')} on ${target}` : `database up to date (${target})`);
process.exit(0);
