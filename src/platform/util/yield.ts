// Lets pending I/O run: SQLite answers synchronously, so chains of store work would otherwise never leave the microtask queue.
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
