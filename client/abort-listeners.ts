// One 'abort' listener on a signal however many waits share it. A client-wide `signal` with dozens
// of calls waiting for one token request, or pausing before their retries, would otherwise add a
// listener per call, and past 10 Node prints a MaxListenersExceededWarning on the caller's signal.

const waiting = new WeakMap<AbortSignal, { callbacks: Set<() => void>; listener: () => void }>();

/**
 * Calls `callback` once when `signal` aborts; the function returned stops that (call it when the
 * wait ends otherwise). The signal carries one listener while any callback waits, none after.
 */
export function whenAborted(signal: AbortSignal, callback: () => void): () => void {
  let entry = waiting.get(signal);
  if (!entry) {
    const callbacks = new Set<() => void>();
    const listener = () => {
      waiting.delete(signal);
      for (const waiter of [...callbacks]) waiter();
    };
    entry = { callbacks, listener };
    waiting.set(signal, entry);
    signal.addEventListener('abort', listener, { once: true });
  }
  const { callbacks, listener } = entry;
  // Each registration is its own entry, even for the same function passed twice.
  const once = () => callback();
  callbacks.add(once);
  return () => {
    if (!callbacks.delete(once) || callbacks.size > 0 || waiting.get(signal)?.callbacks !== callbacks) return;
    waiting.delete(signal);
    signal.removeEventListener('abort', listener);
  };
}
