// Small shared page pieces: the toast line, the navigation and the header's account part.
import { h, replace, $ } from "./dom.js";
import { currentAccount, signOut } from "./session.js";

export function toast(message, isError = false) {
  const el = $("#toast");
  el.className = isError ? "show error" : "show";
  el.textContent = message;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.className = ""; }, isError ? 8000 : 3500);
}

// The page links (the lobby, the leaderboard, the page's own), and who is signed in (`always`: ask the server even without this browser's
// hint of a sign-in, as the account pages do). Returns the account, or null.
export async function nav(links, { always = false } = {}) {
  const here = (path) => (location.pathname === path ? "page" : null);
  replace($("#nav"), h("a", { href: "/web/", "aria-current": here("/web/") }, "Lobby"),
    h("a", { href: "/web/leaderboard", id: "leaderboard-link", "aria-current": here("/web/leaderboard") }, "Leaderboard"),
    links.map(([href, text]) => h("a", { href }, text)));
  const me = await currentAccount({ always });
  showAccount(me);
  return me;
}

export function showAccount(me) {
  const box = $("#who");
  if (!box) return;
  const here = location.pathname + location.search;
  const current = (path) => (location.pathname === path ? "page" : null);
  if (me) {
    replace(box,
      h("span", { class: "who-name" }, h("span", { class: "who-prefix" }, "Signed in as "),
        h("strong", { id: "who-username" }, me.username)),
      h("a", { href: "/web/my-games", "aria-current": current("/web/my-games") }, "My games"),
      h("a", { href: "/web/account", "aria-current": current("/web/account") }, "Account"),
      h("button", { type: "button", class: "link", id: "sign-out", onclick: async () => {
        await signOut();
        location.href = "/web/";
      } }, "Sign out"));
  } else {
    const next = /^\/web\/(sign-in|sign-up)/.test(location.pathname) ? "" : `?next=${encodeURIComponent(here)}`;
    replace(box,
      h("a", { href: `/web/sign-in${next}`, id: "sign-in-link", "aria-current": current("/web/sign-in") }, "Sign in"),
      h("a", { href: `/web/sign-up${next}`, id: "sign-up-link", "aria-current": current("/web/sign-up") }, "Sign up"));
  }
  box.hidden = false;
}

// A time (ms since the epoch) for a person: "5 min ago" (or the date), the full time on hover.
export function when(ms) {
  if (!ms) return h("span", { class: "muted" }, "never");
  const date = new Date(ms);
  const secs = Math.round((Date.now() - ms) / 1000);
  const text = secs < 45 && secs > -45 ? "just now"
    : secs > 0 && secs < 3600 ? `${Math.round(secs / 60)} min ago`
    : secs > 0 && secs < 86400 ? `${Math.round(secs / 3600)} h ago`
    : date.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
  return h("time", { datetime: date.toISOString(), title: date.toLocaleString() }, text);
}
