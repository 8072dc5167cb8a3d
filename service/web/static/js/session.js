// Who is signed in: GET /v1/account with the session cookie (401: nobody). The cookie is
// HttpOnly, so this browser also keeps a hint ("speculation.signed-in") that it signed in:
// the lobby, tables and replays ask only then, so a guest's pages make no account request
// (the account pages always ask). A 401 clears the hint; the answer's csrf_token is kept for
// the state-changing requests (api.js).
import { account, setCsrf, ApiError } from "./api.js";

const HINT = "speculation.signed-in";
let asked = null;        // the one GET /v1/account of this page (a promise)
let really = false;      // whether it was asked of the server (not skipped for want of the hint)

function hinted() {
  try { return localStorage.getItem(HINT) === "1"; } catch { return false; }
}

export function markSignedIn(on) {
  try {
    if (on) localStorage.setItem(HINT, "1");
    else localStorage.removeItem(HINT);
  } catch { /* storage refused: the account pages still ask */ }
}

// The signed-in account ({id, username, created_at, scopes, token_id, kind, csrf_token}) or
// null. `always`: ask even when this browser has no hint of a sign-in; `fresh`: ask again.
export function currentAccount({ always = false, fresh = false } = {}) {
  if (fresh || (always && !really)) asked = null;
  if (!asked) {
    really = always || hinted();
    asked = !really ? Promise.resolve(null) : account.whoami().then((me) => {
      setCsrf(me.csrf_token);
      markSignedIn(true);
      return me;
    }, (err) => {
      if (err instanceof ApiError && err.status === 401) {
        markSignedIn(false);
        setCsrf(null);
      }
      return null;          // signed out (or the service did not answer: the page works as a guest's)
    });
  }
  return asked;
}

// After a sign-in on this page: the account as the sign-in answered it.
export function signedIn(answer) {
  setCsrf(answer.csrf_token);
  markSignedIn(true);
  asked = null;
  really = false;
}

export async function signOut() {
  try { await account.signOut(); } catch { /* the session had ended already */ }
  markSignedIn(false);
  setCsrf(null);
  asked = Promise.resolve(null);
}

export function forgetSession() {
  markSignedIn(false);
  setCsrf(null);
  asked = Promise.resolve(null);
}

// Where to go after signing in: a page of this site only (`next`, else My games).
export function nextPage(fallback = "/web/my-games") {
  const next = new URLSearchParams(location.search).get("next") || "";
  return /^\/web\/[^/\\]/.test(next) || next === "/web/" ? next : fallback;
}
