// Ratings on the pages (docs/ratings.md): a player's name linking to its profile, a rating
// shown as its rounded ordinal (mu − 3σ) with mu ± σ beside or on hover and a "?" while
// provisional, each profile fetched once a page, and the clock presets of a new game.
import { ratings } from "./api.js";
import { h } from "./dom.js";

// A player's page: /web/players/NAME (a username is letters, digits, _ and -).
export function profileHref(username) {
  return `/web/players/${encodeURIComponent(username)}`;
}

export function playerLink(username, attrs = {}) {
  return h("a", { href: profileHref(username), class: "player", ...attrs }, username);
}

export const round1 = (x) => (Math.round(x * 10) / 10).toFixed(1);
export const ordinalText = (r) => String(Math.round(r.ordinal) || 0);     // no "-0"
export const spread = (r) => `μ ${round1(r.mu)} ± ${round1(r.sigma)}`;

// A rating's words for a tooltip and for screen readers.
export function ratingTitle(r) {
  return `rating ${round1(r.ordinal)} (μ − 3σ; ${spread(r)}) after ${r.games} rated game${r.games === 1 ? "" : "s"}` +
    (r.provisional ? ", provisional: fewer than 10 rated games" : "");
}

// The rounded ordinal, "?" when provisional; mu ± σ on hover. `unrated`: the words when the
// player has no rating of this type (null: nothing shown).
export function ratingBadge(r, { unrated = "unrated", typeTitle = "this game" } = {}) {
  if (!r) {
    return unrated ? h("span", { class: "rating none", title: `no rated games of ${typeTitle} yet` }, unrated) : null;
  }
  return h("span", { class: r.provisional ? "rating provisional" : "rating", title: ratingTitle(r) },
    ordinalText(r), r.provisional ? h("span", { "aria-hidden": "true" }, "?") : null,
    h("span", { class: "sr-only" }, ` (${ratingTitle(r)})`));
}

// Each player's profile asked once a page: name → promise of the profile (null: none).
const profiles = new Map();
export function profileOf(username) {
  if (!profiles.has(username)) {
    profiles.set(username, ratings.profile(username).catch(() => null));
  }
  return profiles.get(username);
}

// A new game's clock: seconds a seat may take per move before the random bot plays for it.
export const CLOCKS = [[30, "30 seconds"], [60, "1 minute"], [120, "2 minutes"], [300, "5 minutes"], [3600, "1 hour"],
  [86400, "1 day"]];

export function clockText(seconds) {
  if (!seconds) return "";
  const preset = CLOCKS.find(([s]) => s === Number(seconds));
  if (preset) return `${preset[1]} a move`;
  const n = Number(seconds);
  return n < 120 ? `${Math.round(n)} s a move` : n < 7200 ? `${Math.round(n / 60)} min a move` : `${Math.round(n / 3600)} h a move`;
}
