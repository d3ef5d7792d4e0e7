// The types of tools/jest-preset/throwaway.js (plain JavaScript, shared by the packages' tests).
declare module '@herald/jest-preset/throwaway' {
  import type { ChildProcess } from 'node:child_process';

  export interface TestPki {
    /** The CA that signed the server certificate. */
    caFile: string;
    /** A CA that signed nothing: a client trusting only it must refuse the server. */
    otherCaFile: string;
    /** For DNS localhost and IP 127.0.0.1. */
    serverCert: string;
    serverKey: string;
  }

  export interface TestProcess extends ChildProcess {
    exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
    logFile: string;
  }

  export function tempDir(prefix: string): string;
  export function createTestPki(dir: string): Promise<TestPki>;
  export function freePort(): Promise<number>;
  export function startProcess(options: {
    command: string;
    args: readonly string[];
    logFile: string;
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    uid?: number;
    gid?: number;
  }): TestProcess;
  export function logTail(logFile: string, lines?: number): string;
  export function waitFor(
    check: () => Promise<boolean>,
    options: { what: string; timeoutMs?: number; child?: TestProcess },
  ): Promise<void>;
  export function stopProcess(
    child: TestProcess | undefined,
    options?: { signal?: NodeJS.Signals; timeoutMs?: number },
  ): Promise<void>;
  export function usePki(prefix: string): { readonly dir: string; readonly pki: TestPki };
  export function refusalOf(
    configure: () => unknown,
    options: { errorType: abstract new (...args: never[]) => Error; secret: string },
  ): string;
}
