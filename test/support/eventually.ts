/**
 * Waiting for an event that has no promise of its own: poll a check until it answers. Apart from
 * the harness so that a unit test can wait without loading the app.
 */

/** Polls until `check` returns a value (not undefined), or fails after `ms` naming `what`. */
export async function eventually<T>(check: () => Promise<T | undefined>, ms = 5000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
