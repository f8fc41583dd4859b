export type FixtureObject = Record<string, unknown>;
export interface ChannelTimeouts {
  connect_ms: number;
  first_byte_ms: number;
  idle_ms: number;
}
export declare const FIXTURE_TIERS: Record<'free' | 'pro' | 'vip' | 'enterprise', FixtureObject>;
export declare const FIXTURE_MODELS: FixtureObject[];
export declare const GEMINI_MODEL: FixtureObject & { name: string };
export declare const CHANNEL_MODELS: { openai: string[]; anthropic: string[]; gemini: string[] };
export declare function fixtureChannel(opts: {
  protocol: 'openai' | 'anthropic' | 'gemini';
  suffix: string | number;
  url: string;
  priority: number;
  timeouts: ChannelTimeouts;
  models?: string[];
  /** Names the channels apart (runtime overrides are shared by name). */
  prefix?: string;
}): FixtureObject;
export declare function fixtureConfig(opts: { channels: FixtureObject[]; models?: FixtureObject[]; extra?: FixtureObject }): FixtureObject;
