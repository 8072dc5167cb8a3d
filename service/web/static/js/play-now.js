// "Play now" (quick pairing, docs/matching.md): a button a game type asks for a table of that
// many players (rated or not, with its clock, bots filling it after a wait); the page says
// "Looking for players…" with a Cancel until the account's stream says `seek.matched`, then
// opens the table. A seek lives while the account's stream is open, so this page keeps it
// open; leaving the page cancels the search (a table found while nobody looks would be played
// by the clock).
import { api, matching } from "./api.js";
import { h, replace } from "./dom.js";
import { toast } from "./ui.js";
import { clockText } from "./ratings.js";
import { listenAccount } from "./account-stream.js";
import { clockAndRated, BOTS_AFTER, shortTitle } from "./game-form.js";

const PLAYERS = [2, 3, 4, 5, 6, 7, 8];
const POLL_MS = 4000;          // GET /v1/seeks meanwhile, should an event be missed

export function playNowCard(me, types) {
  const card = h("section", { class: "card play-now", id: "play-now", "aria-labelledby": "play-now-h" });
  if (!me) {
    replace(card, h("h2", { id: "play-now-h" }, "Play now"),
      h("p", {}, "We seat you with the next players who ask for the same game, and bots fill the table after a wait."),
      h("a", { class: "button primary", href: "/web/sign-in?next=%2Fweb%2F", id: "play-now-sign-in" }, "Sign in to play now"));
    return card;
  }
  const seeking = new Map();   // seek id → {seek, since}
  const matchedEarly = new Map();  // seek id → seek.matched event come before the seek's own answer
  let ticker = null;
  let poller = null;
  let going = false;

  // --- the form -------------------------------------------------------------------------------
  const players = h("select", { id: "pn-players", name: "players" },
    PLAYERS.map((n) => h("option", { value: String(n), selected: n === 3 }, `${n} players`)));
  const timing = clockAndRated({ clock: "pn-clock", none: "pn-no-clock", rated: "pn-rated" },
    { ratedHint: "Only with other accounts and bots. Needs a clock.", clockHint: "The clock of the table is the first asker's." });
  const bots = h("select", { id: "pn-bots", name: "bots_after", "aria-describedby": "pn-bots-hint" },
    BOTS_AFTER.map(([v, text]) => h("option", { value: v, selected: v === "20" }, text)));
  const buttons = h("div", { class: "type-buttons", role: "group", "aria-label": "Play now: choose a game" });
  const form = h("form", { class: "play-form", id: "play-now-form" },
    h("div", { class: "field-row" },
      h("div", { class: "field" }, h("label", { for: "pn-players" }, "Players"), players),
      h("div", { class: "field" }, h("label", { for: "pn-bots" }, "Bots join"), bots)),
    h("p", { class: "hint", id: "pn-bots-hint" }, "If not enough people ask in time, bots take the empty seats."),
    timing.nodes, buttons);
  form.addEventListener("submit", (ev) => ev.preventDefault());
  const status = h("div", { class: "seeking", id: "seeking", "aria-live": "polite" });

  function drawButtons() {
    const n = Number(players.value);
    replace(buttons, types.map((t) => {
      const fits = n >= t.min_players && n <= t.max_players;
      return h("button", { type: "button", class: "play-type", dataset: { type: t.name }, disabled: !fits,
        "aria-describedby": `pn-range-${t.name}`, onclick: () => seek(t) },
      h("span", { class: "play-title" }, shortTitle(t)),
      h("span", { class: "play-range small", id: `pn-range-${t.name}` }, `${t.min_players}–${t.max_players} players`));
    }));
  }
  players.addEventListener("change", drawButtons);
  drawButtons();

  // --- seeking ---------------------------------------------------------------------------------
  function elapsed(since) {
    const secs = Math.max(0, Math.floor((Date.now() - since) / 1000));
    return `${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, "0")}`;
  }

  function describe(seek) {
    const type = types.find((t) => t.name === seek.type);
    const botsText = seek.bots_after === null || seek.bots_after === undefined ? "people only"
      : seek.bots_after === 0 ? "bots right away" : `bots after ${Math.round(seek.bots_after)} s`;
    return [type ? shortTitle(type) : seek.type, `${seek.players} players`, seek.rated ? "rated" : null,
      clockText(seek.turn_timeout) || null, botsText].filter(Boolean).join(" · ");
  }

  function draw() {
    const open = [...seeking.values()];
    form.hidden = open.length > 0;
    replace(status, open.length ? [
      h("p", { class: "looking" }, h("span", { class: "spinner", "aria-hidden": "true" }), h("strong", {}, "Looking for players…")),
      h("ul", { class: "seeks" }, open.map(({ seek, since }) => h("li", { class: "seek", dataset: { seek: seek.seek_id } },
        h("div", { class: "seek-what" }, describe(seek)),
        h("div", { class: "seek-row" },
          h("button", { type: "button", class: "cancel-seek", onclick: () => cancel(seek.seek_id) }, "Cancel"),
          h("span", { class: "muted small elapsed", "aria-hidden": "true" }, `waiting ${elapsed(since)}`))))),
      h("p", { class: "hint" }, "Keep this page open: the table opens here when it is found. Leaving the page cancels the search."),
    ] : []);
    document.body.dataset.seeking = String(open.length);
    clearInterval(ticker);
    ticker = open.length ? setInterval(() => {
      status.querySelectorAll(".seek").forEach((li) => {
        const item = seeking.get(li.dataset.seek);
        if (item) li.querySelector(".elapsed").textContent = `waiting ${elapsed(item.since)}`;
      });
    }, 1000) : null;
    clearInterval(poller);
    poller = open.length ? setInterval(poll, POLL_MS) : null;
  }

  async function goTo(gameId, seat) {
    if (going) return;
    going = true;
    seeking.clear();
    clearInterval(ticker); clearInterval(poller);
    replace(status, h("p", { class: "looking found" }, h("strong", {}, "Table found: opening it…")));
    if (!Number.isInteger(seat)) {
      try {
        const summary = await api.summary(gameId);
        seat = summary.seats.findIndex((s) => s.account === me.id);
      } catch { seat = -1; }
    }
    location.href = `/web/games/${encodeURIComponent(gameId)}${seat >= 0 ? `?seat=${seat}` : ""}`;
  }

  async function seek(type) {
    const body = { type: type.name, players: Number(players.value), rated: Boolean(timing.rated.checked) };
    if (timing.clock.value !== "") body.turn_timeout = Number(timing.clock.value);
    if (bots.value !== "") body.bots_after = Number(bots.value);
    buttons.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    try {
      // the stream first: the seek lives with it, and its seek.matched is told on it
      const live = await Promise.race([listenAccount(onEvent), new Promise((done) => setTimeout(() => done(false), 10000))]);
      if (!live) throw new Error("the account's event stream did not open");
      const made = await matching.seek(body);
      if (made.status === "matched" && made.game_id) { goTo(made.game_id); return; }
      if (matchedEarly.has(made.seek_id)) { const ev = matchedEarly.get(made.seek_id); goTo(ev.game_id, ev.seat); return; }
      seeking.set(made.seek_id, { seek: { ...made, turn_timeout: body.turn_timeout }, since: made.opened_at || Date.now() });
      draw();
      status.querySelector(".cancel-seek").focus();
    } catch (err) {
      toast(`Could not look for a game: ${err.message}`, true);
    } finally {
      drawButtons();
    }
  }

  async function cancel(seekId) {
    try {
      await matching.cancelSeek(seekId);
    } catch (err) {
      if (err.status !== 404) { toast(`Could not cancel: ${err.message}`, true); return; }
    }
    seeking.delete(seekId);
    draw();
    poll();        // matched meanwhile? then its table opens
    if (!seeking.size) players.focus();
  }

  async function poll() {
    let mine;
    try { mine = (await matching.seeks()).seeks; } catch { return; }
    for (const s of mine) {
      if (s.status === "matched" && s.game_id && seeking.has(s.seek_id)) { goTo(s.game_id); return; }
    }
    const open = new Set(mine.filter((s) => s.status === "open").map((s) => s.seek_id));
    let changed = false;
    for (const id of [...seeking.keys()]) {
      if (!open.has(id)) { seeking.delete(id); changed = true; }
    }
    for (const s of mine) {
      if (s.status === "open" && !seeking.has(s.seek_id)) { seeking.set(s.seek_id, { seek: s, since: s.opened_at }); changed = true; }
    }
    if (changed) {
      if (!seeking.size) toast("The search ended without a table.", true);
      draw();
    }
  }

  function onEvent(event) {
    if (event.type !== "seek.matched") return;
    if (seeking.has(event.seek_id)) goTo(event.game_id, event.seat);
    else matchedEarly.set(event.seek_id, event);
  }

  // leaving the page ends the search (fetch's keepalive: the request outlives the page)
  window.addEventListener("pagehide", () => {
    if (going) return;
    seeking.forEach((_, id) => { matching.cancelSeek(id, true).catch(() => {}); });
  });

  replace(card, h("h2", { id: "play-now-h" }, "Play now"),
    h("p", { class: "muted small" }, "A table with the next players who ask for the same game."), form, status);
  listenAccount(onEvent);
  poll();      // seeks still open (another tab's, or before a reload): shown with their Cancel
  return card;
}
