// A timed game's countdown: each seat to act that the clock times out, counted down by the
// server's clock (docs/api.md, "Clocks and abandoned games").
//
// A view's `clock.deadlines` ([{seat, at}]) and its `server_time` are on the server's clock (ms
// since the epoch). At each view's arrival the page measures the offset between that clock and
// its own (the server read its clock about half-way through the round trip; as NTP does, the
// sample of the shortest round trip among the last few is kept, its error at most half of it),
// and counts `at - (Date.now() + offset)` down four times a second: a device whose clock is off
// still shows the server's deadline. The deadlines are read again with every view, that is after
// every event of the game (table.js refreshes the view on each).
import { h, replace } from "./dom.js";

// The time left, shown as the server will see it: whole seconds rounded up (1 ms left is 0:01).
export function countdownText(ms) {
  const secs = Math.max(0, Math.ceil(ms / 1000));
  const d = Math.floor(secs / 86400);
  const hh = Math.floor((secs % 86400) / 3600);
  const mm = Math.floor((secs % 3600) / 60);
  const ss = String(secs % 60).padStart(2, "0");
  if (d) return `${d} d ${hh} h`;
  if (hh) return `${hh}:${String(mm).padStart(2, "0")}:${ss}`;
  return `${mm}:${ss}`;
}

const LOW_MS = 10000;   // the last ten seconds are drawn as urgent
const SAMPLES = 8;      // clock readings kept: the one of the shortest round trip counts

export class Countdown {
  constructor() {
    // role=timer is never announced on each tick (its aria-live is off), inside the live status too
    this.el = h("div", { class: "clock", id: "clock", role: "timer", "aria-live": "off", hidden: true });
    this.offset = 0;      // server clock − this device's clock, ms
    this.samples = [];    // the last few [offset, round trip] measured
    this.items = [];      // [{at, left}] the deadlines shown, each with its "time left" element
    this.timer = null;
  }

  // A view (or a summary) arrived: `sentAt` and `receivedAt` are this device's clock around the request.
  sync(serverTime, sentAt, receivedAt) {
    if (typeof serverTime !== "number") return;
    this.samples = [...this.samples.slice(-(SAMPLES - 1)), [serverTime - (sentAt + receivedAt) / 2, receivedAt - sentAt]];
    const best = this.samples.reduce((a, b) => (b[1] <= a[1] ? b : a));
    this.offset = best[0];
    this.el.dataset.offsetMs = String(Math.round(this.offset));   // what the page counts by (its tests read it)
  }

  serverNow() { return Date.now() + this.offset; }

  // The deadlines of `view` (none: hidden), each labelled with its seat's name (`who`), the
  // viewer's own as "Your time".
  show(view, who, mySeat) {
    const clock = view && view.status === "active" ? view.clock : null;
    const deadlines = (clock && clock.deadlines) || [];
    this.items = [];
    if (!deadlines.length) {
      this.el.hidden = true;
      replace(this.el);
      this.stop();
      return;
    }
    const rows = deadlines.map((d) => {
      const left = h("strong", { class: "left", dataset: { deadline: String(d.at) } });
      this.items.push({ at: d.at, left });
      const mine = d.seat === mySeat;
      return h("span", { class: mine ? "countdown mine" : "countdown", dataset: { seat: String(d.seat) } },
        mine ? "Your time: " : `${who(d.seat)}: `, left);
    });
    replace(this.el, h("span", { class: "muted small" }, "Clock "), rows,
      h("span", { class: "muted small clock-note" }, "At 0:00 the random bot plays the move."));
    this.el.hidden = false;
    this.tick();
    if (!this.timer) this.timer = setInterval(() => this.tick(), 250);
  }

  tick() {
    const now = this.serverNow();
    for (const { at, left } of this.items) {
      const ms = at - now;
      left.textContent = countdownText(ms);
      left.dataset.remainingMs = String(Math.round(ms));
      left.parentElement.classList.toggle("low", ms <= LOW_MS);
      left.parentElement.classList.toggle("due", ms <= 0);
    }
  }

  stop() {
    clearInterval(this.timer);
    this.timer = null;
  }
}
