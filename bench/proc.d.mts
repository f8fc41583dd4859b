// Types of bench/proc.mjs for the TypeScript benchmarks.
export declare const CLK_TCK: number;
export declare function processTree(pid: number): number[];
export declare function processCpuMicros(pid: number): number;
export declare function cpuMicros(pid: number): number;
export declare function serverPid(comm: string): number | null;
export declare function freePort(): Promise<number>;
export declare function reachable(url: string, timeoutMs?: number): Promise<boolean>;
