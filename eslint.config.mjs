// ESLint (flat config): typescript-eslint's recommended rules and Next.js's core-web-vitals rules.
// Every exception below says why; inline ones (`eslint-disable-next-line rule -- reason`) do too.
import { defineConfig, globalIgnores } from 'eslint/config';
import nextVitals from 'eslint-config-next/core-web-vitals';
import tseslint from 'typescript-eslint';

export default defineConfig([
  globalIgnores(['node_modules/**', '.next/**', 'dist/**', 'data/**', 'test-output/**', 'lib/generated/**', 'next-env.d.ts', 'bench/.ab/**']),
  ...nextVitals,
  ...tseslint.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    // Tests walk untyped JSON replies (`body.choices[0].delta`); typing every fixture would only restate it.
    files: ['tests/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Signing out, deleting the account and ending every session reload the whole app on purpose:
    // nothing of the old session (client caches, router state) may survive into the next page.
    files: ['components/dashboard/account-settings.tsx', 'components/dashboard/sign-out-button.tsx'],
    rules: { '@next/next/no-location-assign-relative-destination': 'off' },
  },
  {
    // The server's HTML says UTC (it cannot know the viewer's zone); the effect switches to local time
    // once, after hydration. Computing it during render would make server and client HTML differ.
    files: ['components/ui/local-time.tsx'],
    rules: { 'react-hooks/set-state-in-effect': 'off' },
  },
  {
    // Server components render once per request: "now" is the request's time, not an impure re-render.
    files: ['app/(admin)/admin/codes/[[]batchId]/page.tsx'],
    rules: { 'react-hooks/purity': 'off' },
  },
  {
    // Fields takes [label, value] tuples and keys the rows itself; the elements here are tuple cells, not a list.
    files: ['app/(dashboard)/dashboard/logs/[[]id]/page.tsx'],
    rules: { 'react/jsx-key': 'off' },
  },
  {
    // Operator-facing help text; an apostrophe in JSX text renders as written.
    files: ['components/admin/account-actions.tsx'],
    rules: { 'react/no-unescaped-entities': 'off' },
  },
]);
