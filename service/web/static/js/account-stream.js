// The account's one event stream (GET /v1/account/events as Server-Sent Events, event name
// "account-event"): the cookie authenticates it (same origin) and the browser resumes it with
// Last-Event-ID. Opened from where the stream stands now (the events before are history, not
// news). While it is open the account's seeks live (docs/matching.md): a page that seeks keeps
// it open. One a page: every part of the page that listens subscribes to it.
import { account } from "./api.js";
import { currentAccount } from "./session.js";

let source = null;
let opened = null;        // a promise: true once the stream is open (false: it could not be)
let last = 0;
const listeners = new Set();
const signedOutListeners = new Set();

// Where the account's stream stands now.
export async function streamHead() {
  let after = 0;
  for (let i = 0; i < 200; i++) {
    const page = await account.events(after);
    if (page.until <= after) break;
    after = page.until;
  }
  return after;
}

function connect(after, ready) {
  if (source) source.close();
  source = new EventSource(`/v1/account/events?after=${after}`);
  last = after;
  source.addEventListener("account-event", (msg) => {
    let event;
    try { event = JSON.parse(msg.data); } catch { return; }
    last = Math.max(last, Number(msg.lastEventId) || event.id || last);
    document.body.dataset.lastEvent = String(last);
    listeners.forEach((listen) => {
      try { listen(event); } catch (err) { console.error(err); }
    });
  });
  source.onopen = () => {
    document.body.dataset.live = "true";
    ready(true);
  };
  source.onerror = async () => {
    document.body.dataset.live = "false";
    // The browser reconnects by itself (with Last-Event-ID) while it can; a refused stream
    // (signed out, revoked) is closed: ask who is signed in, and reopen after the last event.
    if (source.readyState !== EventSource.CLOSED) return;
    const still = await currentAccount({ fresh: true });
    if (!still) {
      ready(false);
      signedOutListeners.forEach((f) => f());
      return;
    }
    setTimeout(() => connect(last, ready), 3000);
  };
}

// Subscribe to the account's events (opening the stream the first time): `onEvent(event)`
// for each notice from now on. Returns a promise of true once the stream is open.
export function listenAccount(onEvent, { onSignedOut } = {}) {
  if (onEvent) listeners.add(onEvent);
  if (onSignedOut) signedOutListeners.add(onSignedOut);
  if (!opened) {
    opened = new Promise((resolve) => {
      streamHead().then((head) => connect(head, resolve), () => resolve(false));
    });
  }
  return opened;
}

export function stopListening() {
  if (source) source.close();
  source = null;
  opened = null;
  listeners.clear();
  signedOutListeners.clear();
}
