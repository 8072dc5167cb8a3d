// Playing on the board. A legal action is drawn on its piece as a real <button> named by the
// action's words (ctx.legal and ctx.labels, from table.js); a click asks first (every move in
// these games is final: a confirm step, Escape or Cancel to drop it) and only Confirm sends it
// (ctx.post). What a person has half chosen (a cube picked, an amount typed, the move awaiting
// its confirm) is kept across the redraws other players' events cause, for as long as the
// legal actions stay the same. The button list (controls.js) stays the keyboard and
// screen-reader path; a legal action no drawer places on a piece is drawn here as a plain
// button, so that every game can be played on its board alone.
import { h } from "../dom.js";

// --- colours: a text colour for any piece colour, by WCAG contrast -------------------------------
function channel(v) {
  const c = v / 255;
  return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

export function luminance(hex) {
  const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(String(hex).trim());
  if (!m) return 0.5;
  const [r, g, b] = m.slice(1).map((x) => channel(parseInt(x, 16)));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrast(a, b) {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

const DARK = "#111111";
const LIGHT = "#ffffff";

// Dark text on a light colour, white on a dark one: whichever contrasts more (yellow #f9a825
// takes dark text, 10:1, where white gave 1.97:1).
export function inkFor(colour) {
  return contrast(colour, DARK) >= contrast(colour, LIGHT) ? DARK : LIGHT;
}

// A piece's colour and its ink, as custom properties (CSSOM, allowed by the CSP).
export function tint(colour) {
  return { "--c": colour, "--ink": inkFor(colour) };
}

// Letters for names that share an initial (Green and Grey: G and Gy), so no piece is told
// apart by its colour alone.
export function initials(names) {
  const out = {};
  const taken = new Set();
  for (const [key, name] of names) {
    const word = String(name).replace(/[^A-Za-z]/g, "");
    let letter = word.charAt(0).toUpperCase();
    for (let i = 1; taken.has(letter) && i < word.length; i++) letter = word.charAt(0).toUpperCase() + word.charAt(i).toLowerCase();
    taken.add(letter);
    out[key] = letter;
  }
  return out;
}

// --- the board's play ---------------------------------------------------------------------------
const memories = new Map();   // by drawer: {key, pending, picked, sending}

export function boardPlay(ctx, drawer) {
  const legal = (ctx && ctx.legal) || [];
  const live = Boolean(ctx && ctx.post && legal.length);
  const key = JSON.stringify([ctx && ctx.viewer, legal]);
  let mem = memories.get(drawer);
  if (!mem || mem.key !== key) {
    mem = { key, pending: null, picked: {}, sending: false };
    memories.set(drawer, mem);
  }
  const entries = live ? legal.map((action, index) => ({ action, index, label: (ctx.labels || [])[index] || action.type })) : [];
  const placed = new Set();
  const redraw = () => { if (ctx.redraw) ctx.redraw(); };

  const play = {
    live,
    mem,
    entries,
    find: (test) => entries.filter((e) => test(e.action)),
    one: (test) => entries.find((e) => test(e.action)) || null,
    // the move awaiting its confirm: its words (a question) and the action sent on Confirm
    ask(action, question, detail) {
      mem.pending = { action, question, detail: detail || null };
      mem.focus = "board-confirm-yes";
      redraw();
    },
    pick(name, value) {
      mem.picked[name] = value;
      mem.pending = null;
      redraw();
    },
    // a piece that makes a move: a button named by the move's words, the question asked before it
    move(entry, attrs, children, question, action) {
      if (!entry) return null;
      placed.add(entry.index);
      const sent = action || entry.action;
      const pendingHere = mem.pending && JSON.stringify(mem.pending.action) === JSON.stringify(sent);
      const { class: cls, ...rest } = attrs || {};
      return h("button", { type: "button", class: `playable move ${cls || ""}${pendingHere ? " chosen" : ""}`,
        "aria-label": rest["aria-label"] || entry.label, title: rest.title || entry.label,
        dataset: { key: `move:${JSON.stringify(sent)}` }, ...rest,
        onclick: () => play.ask(sent, question || `${entry.label}?`) }, children);
    },
    // a piece that chooses without moving (which cube to place, which share to trade)
    chooser(name, value, attrs, children) {
      const on = mem.picked[name] === value;
      const { class: cls, ...rest } = attrs || {};
      return h("button", { type: "button", class: `playable pick ${cls || ""}`, "aria-pressed": on ? "true" : "false",
        dataset: { key: `pick:${name}:${value}` }, ...rest, onclick: () => play.pick(name, on ? null : value) }, children);
    },
    claim(entry) { if (entry) placed.add(entry.index); },
    // a whole number for a template's field, kept as typed across redraws
    amount(name, range, labelText, onInput) {
      const kept = mem.picked[name];
      const value = Number.isInteger(kept) && kept >= range.min && kept <= range.max ? kept : range.min;
      mem.picked[name] = value;
      const id = `board-${name}`;
      const input = h("input", { type: "number", id, min: range.min, max: range.max, step: 1, value, inputmode: "numeric",
        class: "board-amount", dataset: { key: `amount:${name}` } });
      input.addEventListener("input", () => {
        const n = Number(input.value);
        if (Number.isInteger(n) && n >= range.min && n <= range.max) {
          mem.picked[name] = n;
          input.setCustomValidity("");
          if (onInput) onInput(n);
        } else input.setCustomValidity(`between ${range.min} and ${range.max}`);
      });
      return h("span", { class: "board-amount-label" }, h("label", { for: id }, labelText), input);
    },
    // the confirm step: the pending move said in full, Confirm sends it, Cancel (or Escape) drops it
    confirmBar() {
      if (!mem.pending) return null;
      const cancel = () => { mem.pending = null; mem.focus = null; redraw(); };
      const send = () => {
        if (mem.sending) return;
        const action = mem.pending.action;
        mem.sending = true;
        redraw();
        Promise.resolve(ctx.post(action)).finally(() => {
          mem.sending = false;
          mem.pending = null;
          redraw();
        });
      };
      const fresh = mem.focus === "board-confirm-yes";
      mem.focus = null;
      const bar = h("div", { class: "board-confirm", id: "board-confirm", role: "group", "aria-labelledby": "board-confirm-q" },
        h("p", { id: "board-confirm-q", class: "board-confirm-q" }, mem.pending.question),
        mem.pending.detail ? h("p", { class: "board-confirm-detail small", id: "board-confirm-detail" }, mem.pending.detail) : null,
        h("p", { class: "small muted" }, "A move cannot be taken back."),
        h("div", { class: "actions" },
          h("button", { type: "button", class: "primary", id: "board-confirm-yes", dataset: { key: "confirm" }, disabled: mem.sending,
            "data-autofocus": fresh, onclick: send }, mem.sending ? "Sending…" : "Confirm"),
          h("button", { type: "button", id: "board-confirm-no", dataset: { key: "cancel" }, disabled: mem.sending, onclick: cancel },
            "Cancel")));
      bar.addEventListener("keydown", (ev) => { if (ev.key === "Escape") cancel(); });
      return bar;
    },
    // every legal action no piece took: plain buttons (a template with its number field)
    rest(title = "Other moves") {
      const left = entries.filter((e) => !placed.has(e.index));
      if (!left.length) return null;
      return h("div", { class: "card board-moves", id: "board-moves" }, h("h2", {}, title),
        h("div", { class: "board-move-list" }, left.map((e) => restMove(play, e))));
    },
  };
  return play;
}

function restMove(play, entry) {
  const fields = Object.entries(entry.action).filter(([, v]) => v && typeof v === "object" && "min" in v && "max" in v);
  if (!fields.length) return play.move(entry, {}, entry.label);
  const [field, range] = fields[0];
  const name = `rest-${entry.index}-${field}`;
  const label = entry.label.replace(`${range.min}–${range.max}`, "").replace(/\s+/g, " ").trim();
  const chosen = () => ({ ...entry.action, [field]: play.mem.picked[name] ?? range.min });
  const box = h("span", { class: "board-rest-template" },
    play.amount(name, range, `${label} (${range.min} to ${range.max})`),
    h("button", { type: "button", class: "playable move", dataset: { key: `rest:${entry.index}` },
      onclick: () => play.ask(chosen(), `${label}: ${chosen()[field]}?`) }, "Choose"));
  play.claim(entry);
  return box;
}
