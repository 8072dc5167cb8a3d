// A player's rating over its rated games of one type, drawn as an inline SVG built here (no
// library): the ordinal (mu − 3σ, the rating) as a line with a point a game, mu dashed, and
// the band mu ± σ behind them; both axes labelled. For assistive technology the SVG has a
// <title> and a <desc>, and a table beside it holds the same numbers. Every text goes in as
// text (textContent), never as markup.
import { h } from "./dom.js";
import { round1 } from "./ratings.js";

// The SVG namespace, as the HTML parser gives it to an <svg> (the assets hold no URL:
// tests/test_web_render.py; a constant string parsed, never a name).
const NS = new DOMParser().parseFromString("<svg></svg>", "text/html").querySelector("svg").namespaceURI;

function s(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined && v !== false) el.setAttribute(k, String(v));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// A round step (1, 2, 5 × 10^k) for about `count` ticks over [lo, hi].
function niceStep(lo, hi, count, integer = false) {
  const raw = Math.max((hi - lo) / Math.max(count, 1), integer ? 1 : 1e-9);
  const mag = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * mag).find((x) => x >= raw) || 10 * mag;
}

// The multiples of `step` within [lo, hi].
function ticks(lo, hi, step) {
  const out = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) out.push(Math.round(v * 1e6) / 1e6);
  return out;
}

const placeText = (p) => (p.place && p.players ? `place ${p.place} of ${p.players}` : "");
const when = (ms) => {
  if (!ms) return "";
  const d = new Date(ms);
  const thisYear = d.getFullYear() === new Date().getFullYear();
  return d.toLocaleDateString(undefined, thisYear ? { month: "short", day: "numeric" } : { year: "numeric", month: "short", day: "numeric" });
};

// One point's words, in the chart's tooltips and matching the table's row.
function pointText(p, title) {
  return `${title}, rated game ${p.games}: rating ${round1(p.ordinal)} (μ ${round1(p.mu)} ± ${round1(p.sigma)})` +
    (placeText(p) ? `, ${placeText(p)}` : "") + (when(p.at) ? `, ${when(p.at)}` : "");
}

// The SVG for `history` (oldest first, as GET /v1/accounts/NAME/ratings/TYPE gives it), `width`
// pixels wide. `id` makes the title's and desc's ids unique on the page.
export function ratingSvg(history, { id, title, username, width }) {
  const W = Math.max(260, Math.min(Math.round(width), 900));
  const H = W < 420 ? 200 : 240;
  const m = { left: 46, right: 14, top: 12, bottom: 42 };
  const iw = W - m.left - m.right;
  const ih = H - m.top - m.bottom;
  const xs = history.map((p) => p.games);
  let x0 = Math.min(...xs);
  let x1 = Math.max(...xs);
  if (x0 === x1) { x0 -= 1; x1 += 1; }
  let y0 = Math.min(...history.map((p) => Math.min(p.ordinal, p.mu - p.sigma)));
  let y1 = Math.max(...history.map((p) => Math.max(p.ordinal, p.mu + p.sigma)));
  const pad = Math.max((y1 - y0) * 0.04, 0.5);
  y0 -= pad; y1 += pad;
  const yStep = niceStep(y0, y1, H < 220 ? 4 : 5);
  y0 = Math.floor(y0 / yStep) * yStep;          // the axis from a tick to a tick
  y1 = Math.ceil(y1 / yStep) * yStep;
  const yTicks = ticks(y0, y1, yStep);
  const X = (v) => m.left + ((v - x0) / (x1 - x0)) * iw;
  const Y = (v) => m.top + ih - ((v - y0) / (y1 - y0)) * ih;
  const f = (n) => n.toFixed(1);
  const xTicks = ticks(x0, x1, niceStep(x0, x1, Math.max(2, Math.floor(iw / 60)), true)).filter(Number.isInteger);

  const first = history[0];
  const last = history[history.length - 1];
  const best = history.reduce((a, b) => (b.ordinal > a.ordinal ? b : a));
  const titleId = `${id}-title`;
  const descId = `${id}-desc`;
  const desc = `${username}'s rating in ${title} after each of ${history.length} rated game${history.length === 1 ? "" : "s"}: ` +
    `from ${round1(first.ordinal)} after game ${first.games} to ${round1(last.ordinal)} after game ${last.games} ` +
    `(μ ${round1(last.mu)} ± ${round1(last.sigma)}); highest ${round1(best.ordinal)} after game ${best.games}. ` +
    "The rating is μ − 3σ; the dashed line is μ and the band μ ± σ. The table below holds the same numbers.";

  // the band mu ± σ (a single game: a narrow bar)
  const half = history.length === 1 ? 6 : 0;
  const upper = history.map((p) => `${f(X(p.games) - half)},${f(Y(p.mu + p.sigma))}`);
  const lower = history.map((p) => `${f(X(p.games) + half)},${f(Y(p.mu - p.sigma))}`).reverse();
  if (half) {
    upper.push(`${f(X(first.games) + half)},${f(Y(first.mu + first.sigma))}`);
    lower.push(`${f(X(first.games) - half)},${f(Y(first.mu - first.sigma))}`);
  }
  const line = (key) => history.map((p) => `${f(X(p.games))},${f(Y(p[key]))}`).join(" ");

  return s("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img",
    "aria-labelledby": `${titleId} ${descId}` },
  s("title", { id: titleId }, `Rating history: ${username}, ${title}`),
  s("desc", { id: descId }, desc),
  s("g", { class: "grid", "aria-hidden": "true" },
    yTicks.map((v) => s("line", { x1: m.left, x2: W - m.right, y1: f(Y(v)), y2: f(Y(v)) })),
    y0 < 0 && y1 > 0 ? s("line", { class: "zero", x1: m.left, x2: W - m.right, y1: f(Y(0)), y2: f(Y(0)) }) : null),
  s("g", { class: "axis y", "aria-hidden": "true" },
    s("line", { x1: m.left, x2: m.left, y1: m.top, y2: m.top + ih }),
    yTicks.map((v) => s("text", { x: m.left - 6, y: f(Y(v) + 4), "text-anchor": "end" }, String(v))),
    s("text", { class: "label", transform: `translate(12 ${f(m.top + ih / 2)}) rotate(-90)`, "text-anchor": "middle" }, "Rating")),
  s("g", { class: "axis x", "aria-hidden": "true" },
    s("line", { x1: m.left, x2: W - m.right, y1: m.top + ih, y2: m.top + ih }),
    xTicks.map((v) => [s("line", { x1: f(X(v)), x2: f(X(v)), y1: m.top + ih, y2: m.top + ih + 4 }),
      s("text", { x: f(X(v)), y: m.top + ih + 17, "text-anchor": "middle" }, String(v))]),
    s("text", { class: "label", x: f(m.left + iw / 2), y: H - 6, "text-anchor": "middle" }, "Rated games played")),
  s("polygon", { class: "band", points: [...upper, ...lower].join(" ") }),
  s("polyline", { class: "mu", points: line("mu") }),
  s("polyline", { class: "ordinal", points: line("ordinal") }),
  s("g", { class: "points" }, history.map((p) =>
    s("circle", { class: "point", cx: f(X(p.games)), cy: f(Y(p.ordinal)), r: history.length > 60 ? 2.5 : 4,
      "data-game": p.game_id }, s("title", {}, pointText(p, title))))));
}

// The legend and the table with the same numbers (newest first), beside the chart.
export function legend() {
  return h("ul", { class: "legend small", "aria-hidden": "true" },
    h("li", {}, h("span", { class: "swatch ordinal" }), "rating (μ − 3σ), a point a game"),
    h("li", {}, h("span", { class: "swatch mu" }), "μ"),
    h("li", {}, h("span", { class: "swatch band" }), "μ ± σ"));
}

export function historyTable(history, { id, title, gameHref }) {
  return h("details", { class: "chart-data" },
    h("summary", {}, `The numbers (${history.length} rated game${history.length === 1 ? "" : "s"})`),
    h("div", { class: "scroll" }, h("table", { class: "grid history", id },
      h("caption", { class: "sr-only" }, `Rating after each rated game of ${title}, newest first`),
      h("thead", {}, h("tr", {}, ["Game", "Rating", "μ", "σ", "Place", "When"].map((c, i) =>
        h("th", { scope: "col", class: i && i < 4 ? "num" : null }, c)))),
      h("tbody", {}, history.slice().reverse().map((p) => h("tr", {},
        h("th", { scope: "row" }, h("a", { href: gameHref(p.game_id) }, `#${p.games}`)),
        h("td", { class: "num" }, round1(p.ordinal)),
        h("td", { class: "num" }, round1(p.mu)),
        h("td", { class: "num" }, round1(p.sigma)),
        h("td", {}, p.place && p.players ? `${p.place} of ${p.players}` : "—"),
        h("td", { class: "nowrap", title: p.at ? new Date(p.at).toLocaleString() : null }, when(p.at))))))));
}
