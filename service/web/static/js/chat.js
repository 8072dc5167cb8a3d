// The table chat (docs/web.md "Chat"; docs/api.md "Chat"), on the table and the replay pages.
//
// Two channels, as tabs: "Players" (the game's seats; everyone once the game is over) and
// "Spectators" (everyone reads, a signed-in account writes). Every text is user input and goes
// in as text (dom.js h(), textContent): markup shows as typed, never as HTML.
//
// The table: the page (table.js) says who it plays as with a `table:view` event after each
// refresh ({seat, who, me, view, labels}); the chat reads as that seat (or the spectator) every
// 2.5 s with `after` (one cheap request), posts text or a preset, and a seat mutes another seat
// for itself. The replay: read-only, each line shown beside the event it followed (its
// `version`): the lines said by the step on screen (body[data-at], set by replay.js).
import { chat as api, seatTokens, gameIdFromPath, ApiError } from "./api.js";
import { h, replace, $ } from "./dom.js";
import { currentAccount } from "./session.js";

const POLL_MS = 2500;
const REPLAY_POLL_MS = 10000;     // the replay's, and a finished table's (post-game words)
const CHANNELS = [["players", "Players"], ["spectators", "Spectators"]];
const gameId = gameIdFromPath();
const onReplay = document.body.classList.contains("page-replay");

const st = {
  who: null, seat: null, me: null, status: null, labels: [], seats: [],
  after: 0, items: new Map(),          // id -> item, in id order
  readable: ["spectators"], muted: [], presets: [], maxLength: 280,
  tab: null, picked: false, unread: { players: 0, spectators: 0 }, timer: null, reading: false, sending: false,
  waitUntil: 0, at: null, started: false,
};

const els = {
  panel: h("section", { class: "card chat-panel", id: "chat", "aria-labelledby": "chat-h" }),
  tabs: h("div", { class: "chat-tabs", role: "tablist", "aria-label": "Chat channels" }),
  // a list announced as lines come (aria-live): role="log" here would take the list's role away
  // from its items (axe: listitem), tests/test_web_a11y.py
  lines: h("ol", { class: "chat-lines", id: "chat-lines", "aria-live": "polite", "aria-labelledby": "chat-h" }),
  note: h("p", { class: "chat-note small muted", id: "chat-note" }),
  form: h("form", { class: "chat-form", id: "chat-form" }),
  input: h("input", { type: "text", id: "chat-text", name: "text", autocomplete: "off", maxlength: 280,
    "aria-label": "Message", placeholder: "Say something…" }),
  send: h("button", { type: "submit", id: "chat-send" }, "Send"),
  presets: h("div", { class: "chat-presets", id: "chat-presets", role: "group", "aria-label": "Quick messages" }),
  mutes: h("div", { class: "chat-mutes small", id: "chat-mutes" }),
};

// --- who reads and writes -----------------------------------------------------------------------
const writable = (channel) => (channel === "players" ? st.seat !== null && st.who !== null : Boolean(st.me));
const writerOf = (channel) => (channel === "players" ? st.who : { session: true });

function authorName(item) {
  const a = item.author || {};
  const mine = (a.seat !== null && a.seat !== undefined && a.seat === st.seat && item.channel === "players") ||
    (st.me && a.account && a.account === st.me.id && item.channel === "spectators");
  return `${a.name || "someone"}${a.guest ? " (guest)" : ""}${mine ? " (you)" : ""}`;
}

function clock(ms) {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
}

// --- drawing ------------------------------------------------------------------------------------
function lineOf(item) {
  const removed = item.removed;
  return h("li", { class: `chat-line${removed ? " removed" : ""}`, dataset: { id: item.id, version: item.version, channel: item.channel } },
    h("span", { class: "chat-time", title: new Date(item.at).toLocaleString() }, onReplay ? `#${item.version}` : clock(item.at)),
    " ", h("strong", { class: "chat-author" }, authorName(item)), ": ",
    h("span", { class: "chat-text" }, removed ? "(removed by the operator)" : item.text || ""));
}

function drawTabs() {
  // the players' channel first when it may be read, until the person picks a tab
  if (!st.picked || !st.readable.includes(st.tab)) st.tab = st.readable.includes("players") ? "players" : "spectators";
  replace(els.tabs, CHANNELS.filter(([c]) => st.readable.includes(c)).map(([c, label]) =>
    h("button", { type: "button", role: "tab", id: `chat-tab-${c}`, "aria-selected": String(c === st.tab),
      "aria-controls": "chat-lines", class: c === st.tab ? "chat-tab selected" : "chat-tab",
      onclick: () => { st.tab = c; st.picked = true; st.unread[c] = 0; drawAll(); } },
    label, st.unread[c] && c !== st.tab ? h("span", { class: "badge", "aria-label": `${st.unread[c]} new` }, String(st.unread[c])) : null)));
}

function drawLines() {
  const shown = [...st.items.values()].filter((i) => i.kind === "message" && i.channel === st.tab &&
    !(i.author && st.muted.includes(i.author.seat) && i.channel === "players") && (st.at === null || i.version <= st.at));
  const atBottom = els.lines.scrollHeight - els.lines.scrollTop - els.lines.clientHeight < 30;
  replace(els.lines, shown.length ? shown.map(lineOf)
    : h("li", { class: "chat-empty muted" }, onReplay && st.at !== null ? "Nothing said by this step." : "Nothing said yet."));
  if (onReplay && shown.length) els.lines.lastElementChild.classList.add("latest");
  if (atBottom || onReplay) els.lines.scrollTop = els.lines.scrollHeight;
}

function drawForm() {
  const can = !onReplay && writable(st.tab);
  els.form.hidden = !can;
  els.presets.hidden = !can;
  const waiting = Math.ceil((st.waitUntil - Date.now()) / 1000);
  els.send.disabled = st.sending || waiting > 0;
  els.input.maxLength = st.maxLength;
  replace(els.presets, st.presets.map((p) => h("button", { type: "button", class: "chat-preset", id: `chat-preset-${p.id}`,
    disabled: st.sending || waiting > 0, onclick: () => send({ preset: p.id }) }, p.text)));
  const why = onReplay ? "The chat as it stood at this step (read-only here)."
    : can ? (waiting > 0 ? `Slow down: you can send again in ${waiting} s.` : st.tab === "players"
      ? "Seen by the players; by everyone once the game is over." : "Seen by everyone.")
    : st.tab === "players" ? "Only the players write here."
      : "Sign in to write in the spectators' chat.";
  els.note.textContent = why;
}

function drawMutes() {
  if (onReplay || st.seat === null || st.who === null) { replace(els.mutes); return; }
  // the other seats a person holds or held (a bot never says anything; a seat its person left keeps their lines)
  const others = st.seats.map((s, i) => i).filter((i) => i !== st.seat &&
    ((st.seats[i] || {}).kind === "player" || (st.seats[i] || {}).left));
  replace(els.mutes, others.length ? [h("span", { class: "muted" }, "Mute: "), others.map((i) => {
    const on = st.muted.includes(i);
    const label = (st.labels[i] || `Seat ${i + 1}`).replace(/ \(you\)$/, "");
    return h("button", { type: "button", class: "chat-mute link", id: `chat-mute-${i}`, "aria-pressed": String(on),
      title: on ? `Show ${label}'s messages again` : `Hide ${label}'s messages from you`, onclick: () => toggleMute(i) },
    on ? `${label} (muted)` : label);
  })] : null);
}

function drawAll() {
  drawTabs();
  drawLines();
  drawForm();
  drawMutes();
}

function mount() {
  if (st.started) return;
  st.started = true;
  els.form.append(els.input, els.send);
  els.form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = els.input.value.trim();
    if (text) send({ text });
  });
  replace(els.panel, h("h2", { id: "chat-h" }, "Table chat"), els.tabs, els.lines, els.note, els.form, els.presets, els.mutes);
  const main = $("#main");
  const anchor = onReplay ? $("#events") : $("#log");
  if (anchor && anchor.parentNode === main) anchor.before(els.panel);
  else main.after(els.panel);
  drawAll();
}

// --- reading ------------------------------------------------------------------------------------
async function read() {
  if (st.reading) return;
  st.reading = true;
  try {
    for (let page = 0; page < 20; page++) {
      const answer = await api.read(gameId, st.who, st.after);
      st.readable = answer.readable;
      st.muted = answer.muted || [];
      for (const item of answer.items) take(item);
      st.after = answer.last;
      if (!answer.more) break;
    }
    drawAll();
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403) && st.who !== null) {
      st.who = null; st.seat = null;      // the seat's credential is refused (left, signed out): a spectator's chat
      st.after = 0; st.items.clear();
    }
  } finally {
    st.reading = false;
  }
}

function take(item) {
  if (item.kind === "removal") {
    const gone = st.items.get(item.message);
    if (gone) { gone.removed = true; gone.text = null; }
    return;
  }
  if (!st.items.has(item.id) && st.started && item.channel !== st.tab && st.after > 0) st.unread[item.channel] += 1;
  st.items.set(item.id, item);
}

function poll() {
  clearTimeout(st.timer);
  st.timer = setTimeout(async () => {
    if (document.visibilityState !== "hidden") await read();
    poll();
  }, onReplay || !["open", "active"].includes(st.status) ? REPLAY_POLL_MS : POLL_MS);   // a game over: slower
}

// --- writing ------------------------------------------------------------------------------------
async function send(said) {
  if (st.sending || Date.now() < st.waitUntil) return;
  const channel = st.tab;
  st.sending = true;
  drawForm();
  try {
    const item = await api.say(gameId, writerOf(channel), channel, said);
    if (said.text !== undefined) els.input.value = "";
    take(item);
    await read();
  } catch (err) {
    if (err instanceof ApiError && err.status === 429) {
      st.waitUntil = Date.now() + 1000 * (err.retryAfter || 5);
      setTimeout(drawForm, 1000 * (err.retryAfter || 5) + 50);
      tick();
    }
    st.sending = false;
    drawForm();
    els.note.textContent = `Not sent: ${err.message}`;     // the text stays in the box, to send again
    return;
  }
  st.sending = false;
  drawForm();
  els.input.focus({ preventScroll: true });
}

function tick() {
  if (Date.now() >= st.waitUntil) { drawForm(); return; }
  setTimeout(() => { drawForm(); tick(); }, 1000);
}

async function toggleMute(target) {
  try {
    const answer = st.muted.includes(target) ? await api.unmute(gameId, st.who, target) : await api.mute(gameId, st.who, target);
    st.muted = answer.muted;
    if (!st.muted.includes(target)) { st.after = 0; st.items.clear(); await read(); }   // its lines again, the earlier ones too
    drawAll();
  } catch (err) {
    els.note.textContent = `Not done: ${err.message}`;
  }
}

// --- the pages ----------------------------------------------------------------------------------
async function presets() {
  try {
    const served = await api.presets();
    st.presets = served.presets;
    st.maxLength = served.limits.max_length;
  } catch { st.presets = []; }
}

function onTable(ev) {
  const { seat, who, me, view, labels } = ev.detail;
  const changed = seat !== st.seat || (who === null) !== (st.who === null);
  st.seat = seat; st.who = who; st.me = me; st.status = view.status; st.labels = labels || []; st.seats = view.seats || [];
  if (changed) { st.after = 0; st.items.clear(); }
  if (!st.started) {
    mount();
    presets().then(drawAll);
    read().then(poll);
  } else if (changed) read();
  else drawAll();
}

async function startReplay() {
  const tokens = seatTokens(gameId);
  const seats = Object.keys(tokens);
  st.who = seats.length ? tokens[seats[0]] : null;
  st.seat = seats.length ? Number(seats[0]) : null;
  st.me = await currentAccount();
  const follow = () => {
    const at = Number(document.body.dataset.at);
    if (!Number.isFinite(at) || at < 1) return;
    st.at = at;
    if (!st.started) { mount(); read().then(poll); } else drawLines();
  };
  new MutationObserver(follow).observe(document.body, { attributes: true, attributeFilter: ["data-at"] });
  follow();
}

if (gameId) {
  if (onReplay) startReplay();
  else document.addEventListener("table:view", onTable);
}
