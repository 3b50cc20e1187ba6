/**
 * An app's requests to the chat session: `app_request` answers at once with a request id (a data-service call must
 * not wait for an approval that may take minutes); the answer comes later as an `app_reply` event, which the view
 * hands to `settle`. While any request waits, `waiting()` is true and the view keeps polling, between turns too.
 */

const EARLY_KEPT = 100;

export class AppRequests {
  /** `call(method, ...args)` calls the data service; `wake()` is called when a request starts waiting. */
  constructor(call, wake) {
    this.call = call;
    this.wake = wake;
    this.pending = new Map();
    this.early = new Map();
  }

  waiting() {
    return this.pending.size > 0;
  }

  /** The `result` of the app_reply to `method` asked for the call `callId`; throws its `error` as an Error. */
  async ask(callId, method, params = null) {
    const requestId = await this.call("app_request", callId, method, params);
    if (typeof requestId !== "string") throw new Error(`The chat did not take the app's ${method} request.`);
    const reply = new Promise((resolve, reject) => this.pending.set(requestId, { resolve, reject }));
    const came = this.early.get(requestId);
    if (came) {
      this.early.delete(requestId);
      this.settle(came);
    }
    this.wake();
    return reply;
  }

  /** Answers the request an `app_reply` event names (kept for a moment if its id is not known yet). */
  settle(event) {
    const waiter = this.pending.get(event.request_id);
    if (!waiter) {
      this.early.set(event.request_id, event);
      if (this.early.size > EARLY_KEPT) this.early.delete(this.early.keys().next().value);
      return;
    }
    this.pending.delete(event.request_id);
    if (event.error != null) waiter.reject(new Error(String(event.error)));
    else waiter.resolve(event.result ?? {});
  }
}
