// A game's table: what the seat (or a spectator) sees, live over the event stream, the legal
// actions as controls, every event in words.
import { api, seatTokens, forgetSeat, gameIdFromPath, ApiError } from "./api.js";
import { h, replace, $ } from "./dom.js";
import { toast, nav } from "./ui.js";
import { gameLook } from "./draw/index.js";
import { actionControls } from "./controls.js";

const gameId = gameIdFromPath();
const params = new URLSearchParams(location.search);
const tokens = seatTokens(gameId);
let seat = params.has("spectator") ? null
  : params.has("seat") && tokens[params.get("seat")] ? Number(params.get("seat"))
  : Object.keys(tokens).length ? Number(Object.keys(tokens)[0]) : null;
let token = seat === null ? null : tokens[seat];

let view = null;
let glossary = {};
let look = null;         // the game's title and drawer (draw/index.js)
let labels = [];
let log = [];           // [{version, text}]
let lastVersion = 0;
let source = null;
let refreshTimer = null;
let busy = false;

const main = $("#main");
const els = {
  header: h("section", { class: "status card", id: "status", "aria-live": "polite" }),
  board: h("section", { class: "board", id: "board", "aria-label": "The table" }),
  actions: h("section", { class: "card actions-panel", id: "actions", "aria-labelledby": "actions-h" }),
  log: h("section", { class: "card log", id: "log", "aria-labelledby": "log-h" }),
};

function who(s) { return labels[s] || (s === null || s === undefined ? "nobody" : `Seat ${s}`); }

async function fetchView() {
  if (token) {
    try { return await api.view(gameId, token); } catch (err) {
      if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
        forgetSeat(gameId, seat);
        toast("This device's token for that seat was refused: watching as a spectator.", true);
        seat = null; token = null;
      } else throw err;
    }
  }
  const summary = await api.summary(gameId);
  return { ...summary.view, seats: summary.seats, result: summary.result || summary.view.result };
}

async function describe(events) {
  if (!events.length) return [];
  const versions = new Set(events.map((e) => e.version));
  const words = await api.eventWords(gameId, token, Math.min(...versions) - 1, Math.max(...versions));
  return words.filter((w) => versions.has(w.version));
}

function drawStatus() {
  const st = view.status;
  const toAct = view.to_act || [];
  const yours = seat !== null && toAct.includes(seat);
  const line = st === "open" ? "Waiting for players to take the open seats."
    : st === "active" ? (toAct.length ? `To act: ${toAct.map(who).join(", ")}` : "The rules are moving on…")
    : st === "ended" ? "The game is over; scoring…" : "The game is over.";
  const seatPicker = h("div", { class: "seat-picker" },
    h("span", {}, seat === null ? "You are watching as a spectator." : `You are playing ${who(seat)}.`),
    Object.keys(tokens).length > 1 || (seat !== null) || Object.keys(tokens).length
      ? [Object.keys(tokens).filter((s) => Number(s) !== seat).map((s) =>
          h("a", { class: "button", href: `?seat=${s}` }, `Play seat ${s}`)),
        seat !== null ? h("a", { class: "button", href: "?spectator=1" }, "Watch as spectator") : null]
      : null);
  replace(els.header,
    h("h1", {}, look.title),
    h("p", { class: "muted small" }, `Game ${gameId} · version ${view.version} · ${st}`),
    h("p", { class: yours ? "turn yours" : "turn" }, yours ? "Your move. " : "", line),
    view.result ? h("p", { class: "result", id: "result" }, resultText(view.result)) : null,
    seatPicker);
}

function resultText(result) {
  const winners = result.winners || [];
  const scores = result.scores || [];
  return `${winners.map(who).join(" and ")} ${winners.length === 1 ? "wins" : "share the win"}` +
    (scores.length ? ` — scores: ${scores.map((v, i) => `${who(i)} ${v}`).join("; ")}` : "") + ".";
}

async function drawActions() {
  const legal = view.legal_actions || [];
  const heading = h("h2", { id: "actions-h" }, "Your move");
  if (seat === null) {
    replace(els.actions, h("h2", { id: "actions-h" }, "Actions"), h("p", { class: "muted" },
      "Spectators see the public table only. Take an open seat in the lobby to play."));
    return;
  }
  if (!legal.length) {
    const msg = view.status === "active" ? "Nothing to do right now: waiting for the others."
      : view.status === "open" ? "Waiting for the other seats to be taken." : "The game is over.";
    replace(els.actions, heading, h("p", { class: "muted" }, msg),
      view.status === "scored" ? h("a", { class: "button primary", href: `/web/games/${gameId}/replay` }, "Replay this game") : null);
    return;
  }
  const words = await api.words(gameId, token, { actions: true, version: view.version });
  replace(els.actions, heading, actionControls(legal, words.actions, view.type, post));
  const first = els.actions.querySelector("button, input");
  if (first && document.activeElement === document.body) first.focus({ preventScroll: true });
}

async function post(action) {
  if (busy) return;
  busy = true;
  els.actions.setAttribute("aria-busy", "true");
  try {
    const done = await api.act(gameId, token, action);
    await addEvents(done.events || []);
  } catch (err) {
    toast(err.status === 409 ? "The game moved on before your move arrived: here is the table now."
      : `Not accepted: ${err.message}`, true);
  } finally {
    busy = false;
    els.actions.removeAttribute("aria-busy");
    await refresh();
  }
}

function drawLog() {
  const items = log.slice(-200).reverse();
  replace(els.log, h("h2", { id: "log-h" }, "What happened"),
    h("ol", { class: "events", reversed: true }, items.map((e) =>
      h("li", { value: e.version }, h("span", { class: "v" }, `#${e.version}`), " ", e.text))),
    h("p", { class: "small" }, h("a", { href: `/web/games/${gameId}/replay` }, "Step through the whole game (replay)")));
}

async function addEvents(events) {
  const fresh = events.filter((e) => e.version > lastVersion);
  if (!fresh.length) return;
  lastVersion = Math.max(lastVersion, ...fresh.map((e) => e.version));
  const described = await describe(fresh);
  // Batches come from the stream, a move's answer and a refresh at once, and their words may
  // come back in any order (one waits on a retry): the log is kept in version order.
  log.push(...described);
  log.sort((a, b) => a.version - b.version);
  drawLog();
}

function drawBoard() {
  const draw = look.draw;
  const ctx = { g: glossary, who, viewer: seat, view, seats: view.seats };
  replace(els.board, view.state ? draw(view.state, ctx) : h("p", { class: "card muted" }, "The game has not started yet."));
}

async function refresh() {
  clearTimeout(refreshTimer);
  refreshTimer = null;
  try {
    view = await fetchView();
    labels = (await api.words(gameId, token)).seat_labels;
    drawStatus();
    drawBoard();
    await drawActions();
    if (view.version > lastVersion) {
      const missing = await api.events(gameId, token, lastVersion);
      await addEvents(missing.events);
    }
    document.body.dataset.version = String(view.version);
    document.body.dataset.status = view.status;
  } catch (err) {
    toast(`Could not read the game: ${err.message}`, true);
  }
}

function soon() {
  if (!refreshTimer) refreshTimer = setTimeout(refresh, 120);
}

async function listen() {
  if (source) source.close();
  if (view && view.status === "scored") return;
  let ticket;
  try { ticket = (await api.ticket(gameId, token)).ticket; } catch (err) {
    setTimeout(listen, 3000);
    return;
  }
  source = new EventSource(`/v1/games/${encodeURIComponent(gameId)}/events?ticket=${encodeURIComponent(ticket)}&after=${lastVersion}`);
  source.addEventListener("game-event", async (msg) => {
    const body = JSON.parse(msg.data);
    if (body.event.version > lastVersion) {
      await addEvents([body.event]);
      soon();
    }
    if (body.status === "scored") { source.close(); soon(); }
  });
  source.onerror = () => {
    // The stream ends at its time limit, at the end of the game, or when the ticket has
    // expired: a new ticket, resumed after the last version seen.
    source.close();
    if (!view || view.status !== "scored") setTimeout(() => { refresh(); listen(); }, 1000);
  };
}

async function start() {
  nav([[`/web/games/${gameId}/replay`, "Replay"]]);
  replace(main, els.header, els.actions, els.board, els.log);
  try {
    view = await fetchView();
    [glossary, look] = await Promise.all([api.glossary(view.type), gameLook(view.type)]);
  } catch (err) {
    replace(main, h("p", { class: "error card" }, `No such game, or the service did not answer: ${err.message}`));
    return;
  }
  const all = await api.events(gameId, token, 0);
  labels = (await api.words(gameId, token)).seat_labels;
  await addEvents(all.events);
  await refresh();
  listen();
}

start();
