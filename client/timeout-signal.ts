// A signal that aborts with a TimeoutError after `ms`, held by its own timer until then. Node 20's
// AbortSignal.timeout is held weakly (so that it never keeps a process alive), and AbortSignal.any
// holds its sources weakly too: a timeout joined to another signal could be garbage-collected, its
// timer with it, and a call to a server that never answers then waited forever (nodejs/node#57736).
// Here the timer holds the controller; it is unref'd, so it keeps no process alive either.

export function timeoutSignal(ms: number): AbortSignal {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms).unref();
  return controller.signal;
}
