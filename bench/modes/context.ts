// What main() hands every mode: the services, the gateway environment and the benchmark account.
import type { Server } from '../lib/children';
import type { Headers } from '../lib/measure';
import type { GatewayEnv } from '../lib/services';

export interface RunContext {
  upstream: Server;
  gatewayEnv: GatewayEnv;
  auth: Headers;
  anthropicAuth: Headers;
  /** Lines describing the machine and the services, printed above every report. */
  header: string[];
  /** The run's temporary folder. */
  work: string;
}
