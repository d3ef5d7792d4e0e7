// Tests read JSON answers and assert on them; typing every body would only restate the
// assertions. Source code never sees this: only the `test` folders' typecheck includes it.
export {};

declare global {
  interface Response {
    json<T = any>(): Promise<T>; // eslint-disable-line @typescript-eslint/no-explicit-any
  }
}
