// The leaderboard, /web/leaderboard?type=TYPE&offset=N: the ratings of one game type's rated
// games (GET /v1/leaderboards/TYPE), highest rating (the ordinal, mu − 3σ) first, a page at a
// time; each name links to the player's page. Public: no credentials are sent.
import { ratings, gameTypes } from "./api.js";
import { h, replace, $ } from "./dom.js";
import { nav, toast } from "./ui.js";
import { playerLink, ratingTitle, ordinalText, spread } from "./ratings.js";

const main = $("#main");
const PER_PAGE = 25;
const params = new URLSearchParams(location.search);
let types = [];
let me = null;
const LAST = "speculation.leaderboard";     // the game last looked at, on this device
const remembered = () => { try { return localStorage.getItem(LAST) || ""; } catch { return ""; } };
const state = { type: params.get("type") || remembered(), offset: Math.max(0, Number(params.get("offset")) || 0) };

const els = {
  picker: h("form", { class: "board-picker", id: "board-filters", role: "search", "aria-label": "Pick a game" }),
  board: h("section", { class: "card", id: "leaderboard", "aria-labelledby": "board-h", "aria-live": "polite" }),
};

const titleOf = (name) => (types.find((t) => t.name === name) || { title: name }).title;

function row(r) {
  const you = me && r.account === me.id;
  return h("tr", { class: you ? "you" : null, dataset: { account: r.account } },
    h("td", { class: "num rank" }, String(r.rank)),
    h("th", { scope: "row", class: "who" }, playerLink(r.name),
      r.bot ? h("span", { class: "badge bot" }, "bot") : null,
      r.closed ? h("span", { class: "badge" }, "closed") : null,
      you ? h("span", { class: "badge you" }, "you") : null,
      r.provisional ? h("span", { class: "badge provisional-badge", title: "fewer than 10 rated games" }, "provisional") : null),
    h("td", { class: "num" },
      h("span", { class: "rating-value", title: ratingTitle(r) }, ordinalText(r)),
      h("span", { class: "spread muted" }, spread(r))),
    // a phone shows the wins beneath the games (the wins' column hidden)
    h("td", { class: "num" }, String(r.games), h("span", { class: "wins-sub spread muted" }, `${r.wins} won`)),
    h("td", { class: "num wins-col" }, String(r.wins)));
}

async function load() {
  const shown = new URLSearchParams({ type: state.type });
  if (state.offset) shown.set("offset", state.offset);
  history.replaceState(null, "", `${location.pathname}?${shown}`);
  try { localStorage.setItem(LAST, state.type); } catch { /* not kept: the first game next time */ }
  const heading = h("h2", { id: "board-h" }, titleOf(state.type));
  let page;
  try {
    page = await ratings.leaderboard(state.type, state.offset, PER_PAGE);
  } catch (err) {
    replace(els.board, heading, h("p", { class: "error" }, `Could not read the leaderboard: ${err.message}`));
    return;
  }
  if (page.total && page.offset >= page.total) {          // past the end (an old link): the last page
    state.offset = Math.max(0, (Math.ceil(page.total / PER_PAGE) - 1) * PER_PAGE);
    load();
    return;
  }
  const from = page.rows.length ? page.offset + 1 : 0;
  const to = page.offset + page.rows.length;
  const pager = h("nav", { class: "pager", "aria-label": "Pages of the leaderboard" },
    h("button", { type: "button", id: "prev-page", disabled: page.offset <= 0, onclick: () => {
      state.offset = Math.max(0, page.offset - PER_PAGE); load();
    } }, "← Higher"),
    h("span", { class: "muted small" }, `${from}–${to} of ${page.total}`),
    h("button", { type: "button", id: "next-page", disabled: to >= page.total, onclick: () => {
      state.offset = page.offset + PER_PAGE; load();
    } }, "Lower →"));
  replace(els.board, heading,
    page.rows.length ? h("div", { class: "scroll" }, h("table", { class: "grid board", id: "board" },
      h("caption", { class: "sr-only" }, `Ratings in rated games of ${titleOf(state.type)}, highest first`),
      h("thead", {}, h("tr", {},
        h("th", { scope: "col", class: "num" }, h("abbr", { title: "rank" }, "#")),
        h("th", { scope: "col" }, "Player"),
        h("th", { scope: "col", class: "num" }, "Rating"),
        h("th", { scope: "col", class: "num" }, "Games"),
        h("th", { scope: "col", class: "num wins-col" }, "Wins"))),
      h("tbody", {}, page.rows.map(row))))
      : h("p", { class: "muted", id: "no-rows" }, "No rated games of this type yet: create one in the ",
        h("a", { href: "/web/" }, "lobby"), " (tick \u201cRated\u201d)."),
    page.total > PER_PAGE ? pager : null,
    h("p", { class: "hint" }, "Rated games only. Rating = μ − 3σ: the skill estimate μ less three times its uncertainty σ " +
      "(μ ± σ beneath it). Provisional: fewer than 10 rated games. Bots are rated as their level."));
  document.body.dataset.rows = String(page.rows.length);
  document.body.dataset.total = String(page.total);
  document.body.dataset.type = state.type;
}

function picker() {
  const select = h("select", { id: "board-type", name: "type" },
    types.map((t) => h("option", { value: t.name, selected: t.name === state.type }, t.title)));
  select.addEventListener("change", () => {
    state.type = select.value;
    state.offset = 0;
    load();
  });
  els.picker.addEventListener("submit", (ev) => ev.preventDefault());
  replace(els.picker, h("label", { for: "board-type" }, "Game "), select);
}

async function start() {
  me = await nav([]);
  try {
    types = await gameTypes();
  } catch (err) {
    replace(main, h("p", { class: "error" }, `The service did not answer: ${err.message}`));
    return;
  }
  if (!types.some((t) => t.name === state.type)) state.type = types.length ? types[0].name : "";
  picker();
  replace(main, h("div", { class: "page-head" }, h("h1", {}, "Leaderboard"), els.picker), els.board);
  if (state.type) await load();
  else toast("No game types are hosted.", true);
}

start();
