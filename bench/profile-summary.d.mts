// Types of bench/profile-summary.mjs for the TypeScript benchmark modes.
export interface ProfileSummary {
  totalUs: number;
  [key: string]: unknown;
}
export declare function summarise(profile: unknown, opts?: { from?: number; to?: number; top?: number }): ProfileSummary;
export declare function formatSummary(s: ProfileSummary): string;
