import { cookies } from 'next/headers';

export type Theme = 'system' | 'light' | 'dark';

/** The colour theme the visitor picked (cookie `theme`), else system. */
export async function chosenTheme(): Promise<Theme> {
  const value = (await cookies()).get('theme')?.value;
  return value === 'light' || value === 'dark' ? value : 'system';
}
