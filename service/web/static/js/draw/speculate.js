// Speculate: the price track, holdings, the seat's own objective, hand, the announcement.
// Played on the board (draw/play.js): an event card played from the hand, a trade chosen on a
// company's price row (buy or sell said plainly, an amount, what it costs or brings computed from
// the prices and rules in the view), the answer to an announcement in its card with the same
// preview, the reward's shares in its card, End trading in the turn box.
import { h, plural } from "../dom.js";
import { boardPlay } from "./play.js";

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

export function draw(s, ctx) {
  const { g, who, viewer } = ctx;
  const play = boardPlay(ctx, "speculate");
  const prices = s.prices || {};
  const max = (s.rules || {}).price_max || 30;
  const trades = play.find((a) => a.type === "buy" || a.type === "sell");
  trades.forEach((e) => play.claim(e));
  let picked = play.mem.picked.share;
  if (!trades.some((e) => e.action.share === picked)) picked = null;
  const track = h("div", { class: "card", id: "prices" }, h("h2", {}, "Prices"),
    trades.length ? h("p", { class: "board-hint" }, "Your move: pick a company to buy or sell, or end trading.") : null,
    h("ul", { class: "bars" }, Object.entries(prices).map(([share, p]) => h("li", { class: share === picked ? "picked" : "" },
      trades.some((e) => e.action.share === share)
        ? play.chooser("share", share, { class: "label", "aria-label": `Trade ${name(g, share)} (price ${p})` }, name(g, share))
        : h("span", { class: "label" }, name(g, share)),
      h("span", { class: "bar", role: "img", "aria-label": `${name(g, share)} at ${p} of ${max}` },
        h("span", { class: "fill", style: { width: `${(100 * p) / max}%` } })),
      h("span", { class: "num" }, p)))),
    picked ? tradePanel(play, s, g, picked) : null,
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
  const events = play.find((a) => a.type === "play_event");
  let mine = null;
  if (you) {
    const o = you.objective;
    const held = s.shares[viewer] || {};
    mine = h("div", { class: "card hand", id: "hand" }, h("h2", {}, "Your hand and objective"),
      events.length ? h("p", { class: "board-hint" }, "Your move: click the event card to play.") : null,
      h("p", {}, (you.hand || []).map((c) => {
        const e = events.find((x) => x.action.card === c && !x.used);
        if (!e) return eventCard(c, g);
        e.used = true;
        return play.move(e, { class: "card-move" }, eventCard(c, g), `${e.label}?`);
      })),
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
    a.responder !== null && a.responder !== undefined ? h("p", {}, `Asked now: ${who(a.responder)}`) : null,
    respondMoves(play, s, g, who)) : null;
  const r = s.reward;
  const reward = r ? h("div", { class: "card auction" }, h("h2", {}, "Reward"),
    h("p", {}, `${who(r.to)} collects a reward; still to pay: ${(r.payers_left || []).map(who).join(", ") || "nobody"}`),
    r.decided ? h("p", { class: "small" }, "Chosen so far: " + Object.entries(r.decided).map(([x, n]) => `${n} ${name(g, x)}`).join(", ")) : null,
    play.find((x) => x.type === "give_shares").map((e) => play.move(e, {}, e.label,
      `${e.label}? They go to ${who(r.to)} at ${prices[e.action.share]} each: worth ${e.action.count * prices[e.action.share]}.`))) : null;
  const t = s.turn || {};
  const turn = h("div", { class: "card turn-box" }, h("h2", {}, `Round ${s.round} of ${s.rounds}`),
    h("p", {}, `${who(s.active)} plays · ${((g.phases || {})[s.phase]) || s.phase}`),
    h("p", { class: "small muted" }, `Announcements ${t.announcements ?? 0} of ${t.max_announcements ?? "?"}` +
      ((t.types_announced || []).length ? ` · traded: ${t.types_announced.map((x) => name(g, x)).join(", ")}` : "") +
      (t.late_fee_due ? ` · late fee due ${t.late_fee_due}` : "")),
    h("p", { class: "small muted" }, `Event deck ${s.event_deck_count} · discards ${(s.discard || []).length}`),
    play.one((x) => x.type === "end_trading") ? h("p", {}, play.move(play.one((x) => x.type === "end_trading"), { id: "board-end-trading" },
      "End trading", `End trading? ${t.late_fee_due ? `The late fee of ${t.late_fee_due} is due now; then ` : ""}your second event card.`)) : null);
  const met = (s.objectives_met || []).some((m) => m.length) ? h("details", { class: "card" }, h("summary", {}, "Objectives met"),
    h("ul", {}, s.objectives_met.map((m, i) => (m.length ? h("li", {}, `${who(i)}: ${m.map((o) => objectiveText(o, g)).join("; ")}`) : null)))) : null;
  const revealed = s.hands ? h("div", { class: "card" }, h("h2", {}, "Every hand"), h("ul", {}, s.hands.map((hand, i) => h("li", {},
    `${who(i)}: `, hand.map((c) => eventCard(c, g)), s.objectives && s.objectives[i] ? ` · ${objectiveText(s.objectives[i], g)}` : "")))) : null;
  return h("div", { class: "layout speculate" }, play.confirmBar(), h("div", { class: "row" }, turn, ann || reward), mine, track, holdings,
    revealed, met, ann && reward ? reward : null, play.rest());
}

const times = (n, unit) => `${n} × ${unit} = ${n * unit}`;

// What announcing a trade costs or brings, from the view's prices and rules: players fill at the
// market price; what is left, the bank fills at price + markup (buying) or price − markdown, never
// below 0 (selling). A buy is announced only when the whole at the bank's price is affordable.
export function announcePreview(side, count, price, rules = {}) {
  if (side === "buy") {
    const bank = price + (rules.bank_buy_markup ?? 1);
    return { low: count * price, high: count * bank,
      text: `You pay ${times(count, price)} for what players sell you, up to ${times(count, bank)} if the bank sells it all (at ${bank}).` };
  }
  const bank = Math.max(price - (rules.bank_sell_markdown ?? 1), 0);
  return { low: count * bank, high: count * price,
    text: `You receive ${times(count, price)} for what players buy, down to ${times(count, bank)} if the bank buys it all (at ${bank}).` };
}

// The announcer's choice on the company picked: buy or sell (the legal ones), how many, the preview.
function tradePanel(play, s, g, share) {
  const price = s.prices[share];
  const options = play.find((a) => (a.type === "buy" || a.type === "sell") && a.share === share);
  let side = play.mem.picked.side;
  if (!options.some((e) => e.action.type === side)) side = options[0].action.type;
  const entry = options.find((e) => e.action.type === side);
  const range = entry.action.count;
  const field = `count-${side}-${share}`;
  const count = () => play.mem.picked[field] ?? range.min;
  const preview = h("p", { class: "cost-preview", id: "cost-preview", "aria-live": "polite" });
  const show = () => { preview.textContent = announcePreview(side, count(), price, s.rules).text; };
  const verb = side === "buy" ? "Buy" : "Sell";
  const panel = h("div", { class: "trade-panel", id: "trade-panel", role: "group", "aria-label": `Trade ${name(g, share)}` },
    h("p", {}, h("strong", {}, name(g, share)), ` at ${price}`),
    h("div", { class: "side-choice", role: "radiogroup", "aria-label": "Buy or sell" }, options.map((e) => {
      const on = e.action.type === side;
      return h("button", { type: "button", role: "radio", "aria-checked": on ? "true" : "false", class: `playable pick side${on ? " on" : ""}`,
        dataset: { key: `side:${e.action.type}` }, onclick: () => play.pick("side", e.action.type) },
      e.action.type === "buy" ? "Buy" : "Sell");
    })),
    play.amount(field, range, `How many to ${side} (${range.min} to ${range.max})`, show),
    preview,
    h("button", { type: "button", class: "playable move primary", id: "board-announce", dataset: { key: "announce" },
      onclick: () => {
        const n = count();
        play.ask({ type: side, share, count: n }, `Announce: ${side} ${n} ${name(g, share)}?`, announcePreview(side, n, price, s.rules).text);
      } }, `${verb}…`));
  show();
  return panel;
}

// The answer to an announcement: how many to fill (0: pass), said as what the person does — sell
// to a buyer, buy from a seller — and what it brings or costs at the market price.
function respondMoves(play, s, g, who) {
  const entry = play.one((a) => a.type === "respond");
  if (!entry) return null;
  play.claim(entry);
  const a = s.announcement;
  const range = entry.action.count;
  const price = a.market_price;
  const mySide = a.side === "buy" ? "sell" : "buy";
  const count = () => play.mem.picked.respond ?? range.min;
  const words = (n) => (n === 0 ? `Pass: you ${mySide} no ${name(g, a.share)}.`
    : mySide === "sell" ? `You sell ${n} ${name(g, a.share)} to ${who(a.seat)} at ${price}: you receive ${times(n, price)}.`
      : `You buy ${n} ${name(g, a.share)} from ${who(a.seat)} at ${price}: you pay ${times(n, price)}.`);
  const preview = h("p", { class: "cost-preview", id: "cost-preview", "aria-live": "polite" }, words(count()));
  const go = h("button", { type: "button", class: "playable move primary", id: "board-respond", dataset: { key: "respond" },
    onclick: () => play.ask({ type: "respond", count: count() }, count() ? `${mySide === "sell" ? "Sell" : "Buy"} ${count()} ${name(g, a.share)}?`
      : "Pass on this announcement?", words(count())) }, count() ? (mySide === "sell" ? "Sell…" : "Buy…") : "Pass…");
  const update = (n) => {
    preview.textContent = words(n);
    go.textContent = n ? (mySide === "sell" ? "Sell…" : "Buy…") : "Pass…";
  };
  return h("div", { class: "board-moves-inline", role: "group", "aria-label": "Your answer" },
    play.amount("respond", range, `How many to ${mySide} (${range.min} to ${range.max}; 0 = pass)`, update), preview, go);
}

// What the replay's jumps land on (replay.js): each kind names the events that open one (the
// event's own version is where the jump lands) and how a person numbers them. A kind with no
// event in a game is left out.
export const jumps = [
  { kind: "Round", plural: "Rounds", types: ["turn_started"], number: (d) => d.round, firstOnly: true },
  { kind: "Turn", plural: "Turns", types: ["turn_started"] }];
