/** Blocks the whole thread for `ms`: only for start-up (before anything is served) and test knobs. */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
