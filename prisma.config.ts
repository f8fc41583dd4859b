import { defineConfig } from 'prisma/config';

// Only `prisma generate` uses this file: migrations are plain SQL applied by scripts/migrate.mjs,
// because the Prisma CLI would download a schema engine, which offline machines cannot.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
