// The replay viewer: every version stepped (slider, arrow keys), opened at `?at=N`; jumps by
// the game's own units (a deal, an auction, a turn, a round: each drawer's `jumps`, from the events'
// types and data), each with previous/next buttons and one button per unit; every event in
// words in a clickable list with a text filter; the ledger up to that step, the server's verify report and the page's own check of the export;
// after the end every hand revealed. "Check the bundle" checks the game's dispute bundle in
// this browser (audit.js): fetched as this seat (its signed receipts) or a spectator, or a
// file loaded or dropped, with the receipts this device's table kept.
import { api, seatTokens, gameIdFromPath, keptReceipts } from "./api.js";
import { h, replace, $ } from "./dom.js";
import { toast, nav } from "./ui.js";
import { gameLook } from "./draw/index.js";
import { checkExport } from "./verify.js";
import { verifyBundle } from "./audit.js";
import { rulesLink } from "./rules-link.js";

const MANY = 60;   // more marks than this: a menu instead of one button each

const gameId = gameIdFromPath();
const params = new URLSearchParams(location.search);
const tokens = seatTokens(gameId);
const seat = Object.keys(tokens).length ? Number(Object.keys(tokens)[0]) : null;
const main = $("#main");

let summary, glossary, look, labels = [], words = [], jumps = [], listItems = new Map(), ledger = { entries: [] }, at = 1, finished = false, token = null;
const els = {
  head: h("section", { class: "card" }),
  controls: h("section", { class: "card", "aria-label": "Step through the game" }),
  event: h("section", { class: "card", id: "current", "aria-live": "polite" }),
  board: h("section", { id: "board", "aria-label": "The table at this step" }),
  hands: h("section", { class: "card", id: "hands" }),
  jumps: h("section", { class: "card", id: "jumps", "aria-labelledby": "jumps-h" }),
  events: h("section", { class: "card", id: "events", "aria-labelledby": "events-h" }),
  ledger: h("section", { class: "card ledger", id: "ledger" }),
  verify: h("section", { class: "card", id: "verify" }),
  bundle: h("section", { class: "card", id: "bundle", "aria-labelledby": "bundle-h" }),
};
const who = (s) => labels[s] || (s === null || s === undefined ? "nobody" : `Seat ${s + 1}`);   // people count from 1

function slider() {
  const range = h("input", { type: "range", id: "step", min: 1, max: summary.version, value: at, "aria-label": "Version" });
  range.addEventListener("input", () => go(Number(range.value)));
  const btn = (label, target, key) => h("button", { type: "button", "aria-keyshortcuts": key, onclick: () => go(target()) }, label);
  replace(els.controls, h("label", { for: "step" }, h("strong", {}, "Step "), h("span", { id: "at" }, at), ` of ${summary.version}`),
    h("div", { class: "replay-controls" },
      btn("« First", () => 1, "Home"), btn("◀ Back", () => at - 1, "ArrowLeft"), range,
      btn("Next ▶", () => at + 1, "ArrowRight"), btn("Last »", () => summary.version, "End")),
    h("p", { class: "small muted" }, "Keys: ← and → step, Home and End jump; the slider takes them too."));
}

let pending = 0;
async function go(n) {
  n = Math.max(1, Math.min(summary.version, n));
  at = n;
  $("#at").textContent = String(n);
  $("#step").value = String(n);
  history.replaceState(null, "", `?at=${n}`);
  const ticket = ++pending;
  const current = words.find((w) => w.version === n);
  replace(els.event, h("h2", {}, `Event ${n}`), h("p", { class: "current-event" }, current ? current.text : "(not shown to this viewer)"));
  markCurrent();
  drawJumps();
  drawLedger();
  try {
    const replay = await api.replay(gameId, n, finished ? null : token);
    if (ticket !== pending) return;
    const view = replay.spectator || replay.view;
    const draw = look.draw;
    const state = view.state;
    replace(els.board, state ? draw(state, { g: glossary, who, viewer: finished ? null : view.seat, view, seats: summary.seats })
      : h("p", { class: "card muted" }, "The game has not started at this step."));
    if (finished) {
      const revealed = await api.words(gameId, null, { at: n });
      if (ticket !== pending) return;
      replace(els.hands, h("h2", {}, "Every hand, revealed (the game has ended)"),
        revealed.hands.length ? h("ul", {}, revealed.hands.map((x) => h("li", {},
          h("strong", {}, x.seat === null ? x.label : `${who(x.seat)}'s ${x.label}`), ": ",
          x.cards.length ? x.names.join(", ") : "empty", x.objective ? ` · objective ${x.objective}` : "")))
          : h("p", { class: "muted" }, "Nothing in this game is hidden."));
    }
    document.body.dataset.at = String(n);
  } catch (err) {
    toast(`Could not replay version ${n}: ${err.message}`, true);
  }
}

// The jumps of this game, from its events (as the viewer may see them): [{kind, plural, marks:
// [{version, label}]}], each mark a unit's first event.
function findJumps(events) {
  const out = [];
  for (const spec of look.jumps || []) {
    const marks = [];
    const seen = new Set();
    for (const e of events) {
      if (!spec.types.includes(e.type)) continue;
      const d = e.data || {};
      const n = spec.number ? spec.number(d) : marks.length + 1;
      if (spec.firstOnly && seen.has(n)) continue;
      seen.add(n);
      const text = (words.find((w) => w.version === e.version) || {}).text || "";
      marks.push({ version: e.version, label: String(n ?? marks.length + 1), title: `${spec.kind} ${n ?? marks.length + 1}: ${text}` });
    }
    if (marks.length) out.push({ ...spec, marks });
  }
  return out;
}

// The unit `at` is in: the last mark at or before it (-1: before the first).
const within = (marks) => marks.reduce((found, m, i) => (m.version <= at ? i : found), -1);

function drawJumps() {
  if (!jumps.length) { els.jumps.hidden = true; return; }
  els.jumps.hidden = false;
  // the control that had the focus gets it back in the card drawn again (a keyboard user goes on)
  const had = els.jumps.contains(document.activeElement) ? document.activeElement : null;
  const again = had && (had.id ? `#${had.id}` : `#${had.closest(".jump-kind").id} [data-version="${had.dataset.version}"]`);
  replace(els.jumps, h("h2", { id: "jumps-h" }, "Jump to"), h("div", { class: "jumps" }, jumps.map((j) => {
    const i = within(j.marks);
    const prev = j.marks[i >= 0 && j.marks[i].version < at ? i : i - 1];
    const next = j.marks[i + 1];
    const id = `jump-${j.kind.toLowerCase()}`;
    const list = j.marks.length > MANY
      ? h("select", { id: `${id}-menu`, "aria-label": `${j.plural}: go to one`, onchange: (ev) => go(Number(ev.target.value)) },
        h("option", { value: "" }, `${j.kind} …`),
        j.marks.map((m, k) => h("option", { value: m.version, selected: k === i }, m.title.slice(0, 90))))
      : h("div", { class: "jump-list", role: "group", "aria-label": j.plural, id: `${id}-list` },
        j.marks.map((m, k) => h("button", { type: "button", title: m.title, "aria-label": m.title.slice(0, 140),
          "aria-current": k === i ? "step" : null, dataset: { version: m.version }, onclick: () => go(m.version) }, m.label)));
    return h("div", { class: "jump-kind", id },
      h("strong", {}, j.plural),
      h("button", { type: "button", id: `${id}-prev`, disabled: !prev, onclick: () => prev && go(prev.version),
        title: prev ? prev.title : `No earlier ${j.kind.toLowerCase()}` }, `◀ Previous ${j.kind.toLowerCase()}`),
      h("button", { type: "button", id: `${id}-next`, disabled: !next, onclick: () => next && go(next.version),
        title: next ? next.title : `No later ${j.kind.toLowerCase()}` }, `Next ${j.kind.toLowerCase()} ▶`),
      list);
  })), h("p", { class: "small muted" }, "Page Up and Page Down jump by the first of these."));
  const back = again && els.jumps.querySelector(again);
  if (back && !back.disabled) back.focus({ preventScroll: true });
}

// Every event the viewer may see, in words: a click goes to it; the filter keeps the lines
// holding its text (any case).
function drawEventList() {
  const marked = new Set(jumps.flatMap((j) => j.marks.map((m) => m.version)));
  const count = h("span", { id: "event-count", class: "small muted", "aria-live": "polite" }, `${words.length} events`);
  const list = h("ol", { class: "event-list", id: "event-list", "aria-label": "Every event; choose one to go to it" });
  listItems = new Map();
  for (const w of words) {
    const li = h("li", { class: marked.has(w.version) ? "mark" : null, dataset: { version: w.version, text: w.text.toLowerCase() } },
      h("a", { href: `?at=${w.version}`, onclick: (ev) => { ev.preventDefault(); go(w.version); } },
        h("span", { class: "v" }, `#${w.version}`), w.text));
    listItems.set(w.version, li);
    list.append(li);
  }
  const filter = h("input", { type: "search", id: "event-filter", placeholder: "a name, a card, a company…",
    "aria-controls": "event-list", oninput: () => {
      const q = filter.value.trim().toLowerCase();
      let shown = 0;
      for (const li of listItems.values()) {
        li.hidden = Boolean(q) && !li.dataset.text.includes(q);
        if (!li.hidden) shown += 1;
      }
      count.textContent = q ? `${shown} of ${words.length} events` : `${words.length} events`;
    } });
  replace(els.events, h("h2", { id: "events-h" }, "Every event"),
    h("div", { class: "event-filter" }, h("label", { for: "event-filter" }, "Filter"), filter, count), list);
}

let currentItem = null;
function markCurrent() {
  if (currentItem) currentItem.classList.remove("current-event");
  currentItem = listItems.get(at) || null;
  if (!currentItem) return;
  currentItem.classList.add("current-event");
  const list = currentItem.parentElement;
  // scrolled within the list only: the page stays where the person is
  const top = currentItem.offsetTop - list.offsetTop;
  if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - currentItem.offsetHeight) {
    list.scrollTop = Math.max(0, top - list.clientHeight / 2);
  }
}

function drawLedger() {
  const entries = (ledger.entries || []).filter((e) => e.event <= at);
  const recent = entries.slice(-30).reverse();
  replace(els.ledger, h("h2", {}, `Ledger up to event ${at}`),
    h("p", { class: "small muted" }, `${entries.length} transfers so far (the latest 30 shown, newest first; balances are running).`),
    h("div", { class: "scroll" }, h("table", { class: "grid" },
      h("thead", {}, h("tr", {}, ["#", "From", "To", "Asset", "Qty", "Price"].map((x) => h("th", {}, x)))),
      h("tbody", {}, recent.map((e) => h("tr", {}, h("td", {}, e.event), h("td", {}, account(e.from)), h("td", {}, account(e.to)),
        h("td", {}, e.asset), h("td", { class: "num" }, e.quantity), h("td", { class: "num" }, e.price ?? "")))))));
}

function account(name) {
  const m = /^seat:(\d+)$/.exec(name || "");
  return m ? who(Number(m[1])) : name;
}

async function drawVerify() {
  const server = await api.verify(gameId).catch((err) => ({ error: err.message }));
  const serverText = server.error ? `The server's verify failed: ${server.error}`
    : server.ok ? `OK: ${server.events_checked} events re-run (chain, every decision${server.seed_checked ? ", every random draw from the revealed seed" : "; the seed is still secret"}).`
      : `DIVERGES at event ${server.first_divergence.version} (${server.first_divergence.check}): ${server.first_divergence.message}`;
  const local = h("div", { id: "local-check" });
  const box = [h("h2", {}, "Is this log genuine?"),
    h("h3", { class: "small" }, "The server's verify"), h("p", { class: server.ok ? "check-ok" : "check-bad", id: "server-verify" }, serverText),
    h("h3", { class: "small" }, "This page's own check"), local];
  replace(els.verify, box);
  if (!finished) {
    replace(local, h("p", { id: "local-result" }, "The game is live: its export is redacted until the end, so only the server's verify is available yet."));
    return;
  }
  const run = async (text, label) => {
    replace(local, h("p", {}, "Checking…"));
    const report = await checkExport(text, { forcePure: params.has("pure") });
    replace(local,
      h("p", { id: "local-result", class: report.ok ? "check-ok" : "check-bad" },
        report.ok ? `OK: ${label} checked in this browser with ${report.engine}.` : `FAILED: ${label} does not hold up (${report.engine}).`),
      h("ul", { class: "checks" }, report.checks.map((c) => h("li", { class: c.ok ? "" : "check-bad" }, c.ok ? "✓ " : "✗ ", h("strong", {}, c.name), ": ", c.detail))),
      h("p", { class: "small muted" }, report.note || ""),
      h("label", { for: "export-file" }, "Check an export file instead: "),
      h("input", { type: "file", id: "export-file", accept: ".ndjson,application/x-ndjson,text/plain", onchange: async (ev) => {
        const file = ev.target.files[0];
        if (file) await run(await file.text(), `the file ${file.name}`);
      } }));
    document.body.dataset.localCheck = report.ok ? "ok" : "failed";
  };
  try {
    await run(await api.exportText(gameId, null), "the complete export the server gives");
  } catch (err) {
    replace(local, h("p", { class: "check-bad" }, `Could not fetch the export: ${err.message}`));
  }
}

// --- the dispute bundle ------------------------------------------------------------------------
let trustedKeys = null;   // a /v1/keys answer loaded from a file: then only its keys are trusted

async function readJsonFile(file) {
  try { return JSON.parse(await file.text()); } catch { throw new Error(`${file.name} is not JSON`); }
}

async function fetchBundle() {
  // A guest's seat token, else the account's session (the server answers as a spectator
  // without one); an account holding several seats of the game gets the spectator's bundle.
  const who = seat !== null ? tokens[seat] : { session: true };
  try {
    return await api.bundle(gameId, who);
  } catch (err) {
    if (err.status === 422 || err.status === 403) return api.bundle(gameId, null);
    throw err;
  }
}

function drawBundle() {
  const out = h("div", { id: "bundle-report", "aria-live": "polite" });
  const run = async (load, label) => {
    replace(out, h("p", {}, "Checking…"));
    document.body.dataset.bundleCheck = "running";
    let bundle;
    try { bundle = await load(); } catch (err) {
      replace(out, h("p", { id: "bundle-result", class: "check-bad" }, `Could not read ${label}: ${err.message}`));
      document.body.dataset.bundleCheck = "failed";
      return;
    }
    const kept = keptReceipts(gameId);
    const report = await verifyBundle(bundle, { keys: trustedKeys, kept });
    const failed = report.checks.filter((c) => !c.ok);
    replace(out,
      h("p", { id: "bundle-result", class: report.ok ? "check-ok" : "check-bad" }, report.ok
        ? `OK: all ${report.checks.length} checks of ${label} passed in this browser.`
        : `FAILED: ${failed.map((c) => c.failure).join(", ")} (${label}).`),
      h("ul", { class: "checks", id: "bundle-checks" }, report.checks.map((c) => h("li", { class: c.ok ? "" : "check-bad" },
        c.ok ? "✓ " : "✗ ", h("strong", {}, c.name), c.ok || c.failure === c.name ? "" : ` (${c.failure})`, ": ", c.message))),
      h("p", { class: "small muted" }, `${kept.length} receipt(s) of this game kept on this device were checked with it` +
        (trustedKeys ? "; only the keys of the file you loaded were trusted." : "; the keys trusted are the bundle's own (load a keys file kept earlier to trust only those).")));
    document.body.dataset.bundleCheck = report.ok ? "ok" : "failed";
  };
  const fromFile = (file) => run(() => readJsonFile(file), `the file ${file.name}`);
  const keysNote = h("span", { id: "keys-note", class: "small muted" }, "");
  replace(els.bundle, h("h2", { id: "bundle-h" }, "The dispute bundle"),
    h("p", { class: "small" }, "The game's export, this seat's signed receipts and the game's checkpoints in the " +
      "service's transparency log, checked here: every signature, the hash chain, each receipt against the log, " +
      "each checkpoint's proof against the signed tree head, and every promise of inclusion kept."),
    h("p", {}, h("button", { type: "button", id: "check-bundle", onclick: () => run(fetchBundle, "the service's bundle") }, "Check the bundle")),
    h("p", {}, h("label", { for: "bundle-file" }, "Or check a bundle file (or drop it here): "),
      h("input", { type: "file", id: "bundle-file", accept: ".json,application/json", onchange: (ev) => {
        const file = ev.target.files[0];
        if (file) fromFile(file);
      } })),
    h("p", {}, h("label", { for: "keys-file" }, "Trust only these keys (a /v1/keys answer kept earlier): "),
      h("input", { type: "file", id: "keys-file", accept: ".json,application/json", onchange: async (ev) => {
        const file = ev.target.files[0];
        if (!file) return;
        try {
          const loaded = await readJsonFile(file);
          trustedKeys = Array.isArray(loaded) ? loaded : loaded.keys;
          if (!Array.isArray(trustedKeys)) throw new Error(`${file.name} holds no keys list`);
          keysNote.textContent = ` ${trustedKeys.length} key(s) loaded.`;
        } catch (err) { trustedKeys = null; keysNote.textContent = ` ${err.message}`; }
      } }), keysNote),
    out);
  els.bundle.addEventListener("dragover", (ev) => ev.preventDefault());
  els.bundle.addEventListener("drop", (ev) => {
    ev.preventDefault();
    const file = ev.dataTransfer && ev.dataTransfer.files[0];
    if (file) fromFile(file);
  });
}

async function start() {
  nav([[`/web/games/${gameId}`, "Table"]]);
  try {
    summary = await api.summary(gameId);
    [glossary, look] = await Promise.all([api.glossary(summary.type), gameLook(summary.type)]);
  } catch (err) {
    replace(main, h("p", { class: "error card" }, `No such game, or the service did not answer: ${err.message}`));
    return;
  }
  finished = summary.status === "ended" || summary.status === "scored";
  token = finished ? null : (seat !== null ? tokens[seat] : null);
  const viewer = finished ? null : seat;
  const [events, led] = await Promise.all([api.events(gameId, token, 0), api.ledger(gameId, token)]);
  ledger = led;
  const described = await api.words(gameId, token);
  words = await api.eventWords(gameId, token, 0, events.version);
  labels = described.seat_labels;
  const rated = summary.platform_options && summary.platform_options.rated;
  replace(els.head, h("h1", {}, `Replay: ${look.title}`, rated ? h("span", { class: "badge rated" }, "Rated") : null,
    rulesLink(summary.type)),
    h("p", { class: "muted small" }, `Game ${gameId} · ${summary.status} · ${summary.version} events · ` +
      (finished ? "everything disclosed (the game has ended)" : viewer !== null ? `as ${who(viewer)}` : "as a spectator")),
    described.result ? h("p", { class: "result" }, described.result) : null,
    summary.status === "abandoned" ? h("p", { class: "hint", id: "abandoned-note" }, "This game was abandoned before " +
      "its end (nobody moved for too long): it stays as it was, its hidden cards and seed undisclosed.") : null);
  jumps = findJumps(events.events || []);
  replace(main, els.head, els.controls, els.jumps, els.event, els.board, finished ? els.hands : null, els.events, els.ledger, els.verify, els.bundle);
  slider();
  drawEventList();
  document.addEventListener("keydown", (ev) => {
    if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLSelectElement || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const map = { ArrowLeft: at - 1, ArrowRight: at + 1, Home: 1, End: summary.version };
    if (ev.key in map) { ev.preventDefault(); go(map[ev.key]); return; }
    if ((ev.key === "PageUp" || ev.key === "PageDown") && jumps.length) {
      const marks = jumps[0].marks;
      const target = ev.key === "PageDown" ? marks.find((m) => m.version > at) : [...marks].reverse().find((m) => m.version < at);
      if (target) { ev.preventDefault(); go(target.version); }
    }
  });
  const first = Number(params.get("at")) || summary.version;
  await go(first);
  drawVerify();
  drawBundle();
}

start();
