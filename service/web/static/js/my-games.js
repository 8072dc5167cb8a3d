// My games: the account's games (GET /v1/account/games), filtered (active / finished, my
// turn, game type), newest move first, a page at a time; live over the account's event
// stream (GET /v1/account/events as Server-Sent Events, the cookie authenticating it; the
// browser resumes it with Last-Event-ID). A turn while the tab is in the background counts
// in the title. Above the list, the invitations (challenges and rematch offers, to the account
// with Accept / Decline and its own with Cancel), live from the same stream.
import { account, gameTypes } from "./api.js";
import { h, replace, $, plural } from "./dom.js";
import { nav, toast, when } from "./ui.js";
import { playerLink } from "./ratings.js";
import { listenAccount, stopListening } from "./account-stream.js";
import { invitationsBox } from "./invitations.js";

const main = $("#main");
const PER_PAGE = 20;
const TITLE = document.title;
const params = new URLSearchParams(location.search);
const filters = {
  status: ["active", "finished"].includes(params.get("status")) ? params.get("status") : "",
  my_turn: params.get("my_turn") === "true",
  type: params.get("type") || "",
  offset: Math.max(0, Number(params.get("offset")) || 0),
};
let types = [];
let me = null;
let unseen = 0;          // turns come while the tab was in the background
let reloadTimer = null;

const els = {
  filters: h("form", { class: "card filters", id: "filters", role: "search", "aria-label": "Filter my games" }),
  list: h("section", { class: "card", id: "my-games", "aria-labelledby": "my-games-h", "aria-live": "polite" }),
};

const titleOf = (name) => (types.find((t) => t.name === name) || { title: name }).title;

function seatName(game, i) {
  const s = game.seats[i] || {};
  const base = s.kind === "player" && s.name ? s.name : s.kind === "bot" && s.left ? `Bot ${i + 1} for ${s.name || `seat ${i + 1}`}`
    : s.kind === "bot" ? `Bot ${i + 1}`
    : s.reserved ? `Seat ${i + 1} (reserved for ${s.invited || "an invited player"})` : `Seat ${i + 1} (open)`;
  const marks = [];
  if (s.kind === "player" && s.guest) marks.push("guest");
  if (s.closed) marks.push("closed account");
  if (game.my_seats.includes(i)) marks.push((game.left_seats || []).includes(i) ? "you left" : "you");
  else if (s.left) marks.push("left");
  return marks.length ? `${base} (${marks.join(", ")})` : base;
}

// A seat in the players' line: an account's name linking to its player's page.
function seatNode(game, i) {
  const s = game.seats[i] || {};
  if (!(s.kind === "player" && s.account && s.name)) return seatName(game, i);
  const marks = [s.closed ? "closed account" : null, game.my_seats.includes(i) ? "you" : null].filter(Boolean);
  return [playerLink(s.name), marks.length ? ` (${marks.join(", ")})` : ""];
}

function statusText(game) {
  if (game.status === "open") return "Waiting for players";
  if (game.status === "active") return "In play";
  if (game.status === "expired") return "Never started";
  if (game.status === "abandoned") return "Abandoned";
  return "Finished";
}

function turnText(game) {
  if (game.status === "expired") return "A challenge or rematch that was declined, cancelled or not accepted in time";
  if (game.status === "abandoned") return "Nobody moved for too long while a person was to act: over, unscored, unrated";
  if (game.status === "open") {
    const waiting = game.seats.filter((s) => s.kind === "open" && s.reserved).map((s) => s.invited || "an invited player");
    return waiting.length ? `Waiting for ${waiting.join(", ")} to accept` : "Open seats left";
  }
  if (game.status === "active") {
    return game.to_act.length ? `To act: ${game.to_act.map((i) => seatName(game, i)).join(", ")}` : "The rules are moving on";
  }
  const winners = (game.result && game.result.winners) || [];
  return winners.length ? `Won by ${winners.map((i) => seatName(game, i)).join(" and ")}` : "Game over";
}

function link(game) {
  const held = game.my_seats.filter((s) => !(game.left_seats || []).includes(s));   // a seat left is watched, not played
  const acting = held.find((s) => game.to_act.includes(s));
  const seat = acting !== undefined ? acting : held[0];
  return `/web/games/${encodeURIComponent(game.game_id)}${seat !== undefined ? `?seat=${seat}` : ""}`;
}

function row(game) {
  return h("li", { class: game.my_turn ? "game mine-to-act" : "game", dataset: { game: game.game_id } },
    h("div", { class: "game-head" },
      h("a", { href: link(game), class: "game-link" }, h("strong", {}, titleOf(game.type))),
      game.my_turn ? h("span", { class: "badge turn-badge" }, "Your turn") : null,
      h("span", { class: `badge status-${game.status}` }, statusText(game)),
      (game.left_seats || []).length ? h("span", { class: "badge left-badge" }, "You left") : null),
    h("div", { class: "small" }, h("span", { class: "muted" }, "Players: "),
      game.seats.map((_, i) => [i ? ", " : "", seatNode(game, i)])),
    h("div", { class: "small" }, turnText(game)),
    h("div", { class: "small muted" }, "Last move ", when(game.last_move_at), ` · game ${game.game_id}`));
}

function query() {
  const q = { offset: filters.offset, limit: PER_PAGE };
  if (filters.status) q.status = filters.status;
  if (filters.my_turn) q.my_turn = "true";
  if (filters.type) q.type = filters.type;
  return q;
}

async function load() {
  clearTimeout(reloadTimer);
  reloadTimer = null;
  const q = query();
  const shown = new URLSearchParams(q);
  shown.delete("limit");
  if (!filters.offset) shown.delete("offset");
  history.replaceState(null, "", `${location.pathname}${shown.toString() ? "?" + shown : ""}`);
  let page;
  try {
    page = await account.games(q);
  } catch (err) {
    if (err.status === 401) { signedOut(); return; }
    replace(els.list, h("h2", { id: "my-games-h" }, "Games"), h("p", { class: "error" }, `Could not read your games: ${err.message}`));
    return;
  }
  if (page.total && page.offset >= page.total) {           // the last page emptied: back one
    filters.offset = Math.max(0, (Math.ceil(page.total / PER_PAGE) - 1) * PER_PAGE);
    load();
    return;
  }
  const from = page.games.length ? page.offset + 1 : 0;
  const to = page.offset + page.games.length;
  const pager = h("nav", { class: "pager", "aria-label": "Pages of games" },
    h("button", { type: "button", id: "prev-page", disabled: page.offset <= 0, onclick: () => {
      filters.offset = Math.max(0, page.offset - PER_PAGE); load();
    } }, "← Newer"),
    h("span", { class: "muted small" }, page.total ? `${from}–${to} of ${page.total}` : ""),
    h("button", { type: "button", id: "next-page", disabled: to >= page.total, onclick: () => {
      filters.offset = page.offset + PER_PAGE; load();
    } }, "Older →"));
  const mine = page.games.filter((g) => g.my_turn).length;
  replace(els.list,
    h("h2", { id: "my-games-h" }, "Games", page.total ? h("span", { class: "muted small" }, ` · ${plural(page.total, "game")}`) : null),
    page.games.length ? h("ul", { class: "games my-games" }, page.games.map(row))
      : h("p", { class: "muted", id: "no-games" }, filters.status || filters.my_turn || filters.type
        ? "No game matches these filters." : "No games yet: take a seat in the lobby."),
    page.total > PER_PAGE ? pager : null);
  document.body.dataset.games = String(page.total);
  document.body.dataset.myTurn = String(mine);
}

function soon() {
  if (!reloadTimer) reloadTimer = setTimeout(load, 150);
}

function filterForm() {
  const status = h("select", { id: "f-status", name: "status" },
    [["", "All"], ["active", "Active"], ["finished", "Finished"]].map(([v, t]) =>
      h("option", { value: v, selected: filters.status === v }, t)));
  const type = h("select", { id: "f-type", name: "type" }, h("option", { value: "" }, "All games"),
    types.map((t) => h("option", { value: t.name, selected: filters.type === t.name }, t.title)));
  const myTurn = h("input", { type: "checkbox", id: "f-my-turn", name: "my_turn", checked: filters.my_turn });
  const changed = () => {
    filters.status = status.value;
    filters.type = type.value;
    filters.my_turn = myTurn.checked;
    filters.offset = 0;
    load();
  };
  [status, type, myTurn].forEach((el) => el.addEventListener("change", changed));
  els.filters.addEventListener("submit", (ev) => ev.preventDefault());
  replace(els.filters,
    h("div", { class: "field" }, h("label", { for: "f-status" }, "Status"), status),
    h("div", { class: "field" }, h("label", { for: "f-type" }, "Game"), type),
    h("div", { class: "field check" }, myTurn, h("label", { for: "f-my-turn" }, "My turn only")));
}

function noticeTurn() {
  if (!document.hidden) return;
  unseen += 1;
  document.title = `(${unseen}) Your turn — ${TITLE}`;
}

document.addEventListener("visibilitychange", () => {
  if (!document.hidden && unseen) {
    unseen = 0;
    document.title = TITLE;
  }
});

function onEvent(event) {
  if (event.type === "turn") noticeTurn();
  if (["turn", "game.started", "game.ended", "game.joined", "invitation", "invitation.accepted",
    "invitation.expired", "seek.matched"].includes(event.type)) soon();
}

function signedOut() {
  stopListening();
  replace(main, h("div", { class: "card narrow" }, h("h1", {}, "My games"),
    h("p", {}, "Sign in to see your games."),
    h("a", { class: "button primary", href: `/web/sign-in?next=${encodeURIComponent("/web/my-games")}` }, "Sign in"),
    h("a", { class: "button", href: "/web/sign-up?next=%2Fweb%2Fmy-games" }, "Sign up")));
}

async function start() {
  me = await nav([], { always: true });
  if (!me) { signedOut(); return; }
  try { types = await gameTypes(); } catch (err) { toast(`Could not read the game types: ${err.message}`, true); }
  filterForm();
  const invitations = invitationsBox(me, { titleOf });
  replace(main, h("div", { class: "page-head" }, h("h1", {}, "My games"),
    h("a", { class: "button primary", href: "/web/" }, "New game")), invitations.el, els.filters, els.list);
  await load();
  invitations.load();
  invitations.keepFresh();
  const live = await listenAccount((event) => { invitations.onEvent(event); onEvent(event); }, { onSignedOut: signedOut });
  if (!live) toast("Live updates are off: the account's event stream did not open.", true);
}

start();
