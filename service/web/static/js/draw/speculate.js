// Speculate: the price track, holdings, the seat's own objective, hand, the announcement.
import { h, plural } from "../dom.js";

const name = (g, s) => ((g.shares || {})[s] || { name: s }).name;
const cardName = (g, c) => ((g.cards || {})[c] || { name: c }).name;

export function eventCard(c, g) {
  const [kind, effect] = String(c).split(":");
  const cls = effect === "dividend" ? "div" : effect && effect.startsWith("-") ? "down" : "up";
  return h("span", { class: `ecard ${cls}`, title: cardName(g, c) }, cardName(g, c));
}

function objectiveText(o, g) {
  return `Level ${o.level}: ` + Object.entries(o.targets).map(([s, v]) => `${name(g, s)} ${v}`).join(", ");
}

export function draw(s, { g, who, viewer }) {
  const prices = s.prices || {};
  const max = (s.rules || {}).price_max || 30;
  const track = h("div", { class: "card", id: "prices" }, h("h2", {}, "Prices"),
    h("ul", { class: "bars" }, Object.entries(prices).map(([share, p]) => h("li", {},
      h("span", { class: "label" }, name(g, share)),
      h("span", { class: "bar", role: "img", "aria-label": `${name(g, share)} at ${p} of ${max}` },
        h("span", { class: "fill", style: { width: `${(100 * p) / max}%` } })),
      h("span", { class: "num" }, p)))),
    h("p", { class: "small muted" }, `Prices run from ${(s.rules || {}).price_min ?? 0} to ${max}.`));
  const shares = Object.keys(prices);
  const holdings = h("div", { class: "card" }, h("h2", {}, "Holdings"),
    h("div", { class: "scroll" }, h("table", { class: "grid" },
      h("thead", {}, h("tr", {}, h("th", {}, "Seat"), h("th", { class: "num" }, "Money"),
        shares.map((x) => h("th", { class: "num" }, name(g, x))), h("th", { class: "num" }, "Cards"), h("th", { class: "num" }, "Obj."))),
      h("tbody", {},
        (s.money || []).map((m, i) => h("tr", { class: ((s.to_act || []).includes(i) ? "acting " : "") + (s.alive && !s.alive[i] ? "out" : "") },
          h("th", { scope: "row" }, who(i), s.alive && !s.alive[i] ? " (bankrupt)" : ""), h("td", { class: "num" }, m),
          shares.map((x) => h("td", { class: "num" }, s.shares[i][x] || "")),
          h("td", { class: "num" }, s.hand_counts[i]), h("td", { class: "num" }, s.objective_levels[i] ?? "—"))),
        h("tr", { class: "bank" }, h("th", { scope: "row" }, "Bank"), h("td", { class: "num" }, s.bank.money),
          shares.map((x) => h("td", { class: "num" }, s.bank.shares[x] || "")), h("td", {}, ""), h("td", {}, ""))))));
  const you = s.you;
  let mine = null;
  if (you) {
    const o = you.objective;
    const held = s.shares[viewer] || {};
    mine = h("div", { class: "card hand", id: "hand" }, h("h2", {}, "Your hand and objective"),
      h("p", {}, (you.hand || []).map((c) => eventCard(c, g))),
      o ? [h("p", {}, h("strong", {}, objectiveText(o, g)), you.objective_met_now ? h("span", { class: "badge gold" }, "met now") : null),
        h("ul", { class: "small" }, Object.entries(o.targets).map(([x, target]) => {
          const value = (held[x] || 0) * (prices[x] || 0);
          return h("li", {}, `${name(g, x)}: ${held[x] || 0} × ${prices[x]} = ${value} of ${target}`, value >= target ? " ✓" : "");
        }))] : h("p", { class: "muted" }, "No objective left."));
  }
  const a = s.announcement;
  const ann = a ? h("div", { class: "card auction", id: "announcement" }, h("h2", {}, "Announcement"),
    h("p", { class: "big-number" }, `${a.side === "buy" ? "Buying" : "Selling"} ${a.count} ${name(g, a.share)}`),
    h("p", {}, `by ${who(a.seat)} at ${a.market_price} · ${a.remaining} still to fill`),
    a.responder !== null && a.responder !== undefined ? h("p", {}, `Asked now: ${who(a.responder)}`) : null) : null;
  const r = s.reward;
  const reward = r ? h("div", { class: "card auction" }, h("h2", {}, "Reward"),
    h("p", {}, `${who(r.to)} collects a reward; still to pay: ${(r.payers_left || []).map(who).join(", ") || "nobody"}`),
    r.decided ? h("p", { class: "small" }, "Chosen so far: " + Object.entries(r.decided).map(([x, n]) => `${n} ${name(g, x)}`).join(", ")) : null) : null;
  const t = s.turn || {};
  const turn = h("div", { class: "card turn-box" }, h("h2", {}, `Round ${s.round} of ${s.rounds}`),
    h("p", {}, `${who(s.active)} plays · ${((g.phases || {})[s.phase]) || s.phase}`),
    h("p", { class: "small muted" }, `Announcements ${t.announcements ?? 0} of ${t.max_announcements ?? "?"}` +
      ((t.types_announced || []).length ? ` · traded: ${t.types_announced.map((x) => name(g, x)).join(", ")}` : "") +
      (t.late_fee_due ? ` · late fee due ${t.late_fee_due}` : "")),
    h("p", { class: "small muted" }, `Event deck ${s.event_deck_count} · discards ${(s.discard || []).length}`));
  const met = (s.objectives_met || []).some((m) => m.length) ? h("details", { class: "card" }, h("summary", {}, "Objectives met"),
    h("ul", {}, s.objectives_met.map((m, i) => (m.length ? h("li", {}, `${who(i)}: ${m.map((o) => objectiveText(o, g)).join("; ")}`) : null)))) : null;
  const revealed = s.hands ? h("div", { class: "card" }, h("h2", {}, "Every hand"), h("ul", {}, s.hands.map((hand, i) => h("li", {},
    `${who(i)}: `, hand.map((c) => eventCard(c, g)), s.objectives && s.objectives[i] ? ` · ${objectiveText(s.objectives[i], g)}` : "")))) : null;
  return h("div", { class: "layout speculate" }, h("div", { class: "row" }, turn, ann || reward), mine, track, holdings, revealed, met,
    ann && reward ? reward : null);
}
