// Speculation: the piles, the trump, the pot, the chips, the auction.
import { h, plural } from "../dom.js";

export function card(code, g, extra = {}) {
  const info = (g.cards || {})[code];
  if (!info) return h("span", { class: "pcard back", title: "face-down card", "aria-label": "a face-down card" }, "🂠");
  return h("span", { class: `pcard ${info.red ? "red" : "black"}`, title: info.name, "aria-label": info.name, ...extra }, info.short);
}

export function draw(s, { g, who, viewer }) {
  const suit = s.trump ? g.suits[s.trump] : null;
  const holder = s.best_in_dead_hand ? "the dead hand" : who(s.holder);
  const trumpBox = h("div", { class: "card trump-box" },
    h("h2", {}, "Trump"),
    suit ? [h("p", { class: `big-suit ${"DH".includes(s.trump) ? "red" : "black"}`, "aria-label": `${suit.name} are trumps` },
      suit.symbol, h("span", { class: "small" }, ` ${suit.name}`)),
    h("p", {}, "Turned up: ", card(s.turn_up, g)),
    h("p", {}, "Best trump: ", card(s.best_trump, g), ` held by ${holder}`)] : h("p", { class: "muted" }, "Between deals."));
  const potBox = h("div", { class: "card pot-box" }, h("h2", {}, "Pot"),
    h("p", { class: "big-number", id: "pot" }, plural(s.pot, "chip")),
    h("p", { class: "muted small" }, `Deal ${s.deal} of ${s.deals} · dealer ${who(s.dealer)}` +
      (s.house ? ` · house ${s.house}` : "")));
  const rows = s.chips.map((chips, i) => h("tr", { class: (s.to_act || []).includes(i) ? "acting" : "" },
    h("th", { scope: "row" }, who(i), i === s.dealer ? h("span", { class: "badge", title: "dealer" }, "D") : null,
      i === s.holder && !s.best_in_dead_hand && s.trump ? h("span", { class: "badge gold", title: "holds the best trump" }, "★") : null),
    h("td", { class: "num" }, chips),
    h("td", {}, h("span", { class: "pile", "aria-label": plural(s.piles[i], "face-down card") },
      Array.from({ length: s.piles[i] }, () => h("span", { class: "pcard back mini", "aria-hidden": "true" }, "")),
      s.piles[i] ? "" : "—"))));
  if (s.dead_hand !== null && s.dead_hand !== undefined) {
    rows.push(h("tr", {}, h("th", { scope: "row" }, "Dead hand"), h("td", {}, "—"),
      h("td", {}, `${s.dead_hand} face down`)));
  }
  const seats = h("div", { class: "card" }, h("h2", {}, "Players"),
    h("table", { class: "grid" }, h("thead", {}, h("tr", {}, h("th", {}, "Seat"), h("th", { class: "num" }, "Chips"), h("th", {}, "Pile"))),
      h("tbody", {}, rows)));
  const revealed = h("div", { class: "card" }, h("h2", {}, "Revealed this deal"),
    (s.revealed || []).length ? h("ul", { class: "revealed" }, s.revealed.map((r) =>
      h("li", {}, card(r.card, g), h("span", { class: "small muted" }, r.by === null ? "dead hand" : who(r.by)))))
      : h("p", { class: "muted" }, "Nothing yet."));
  let auction = null;
  if (s.auction) {
    const a = s.auction;
    auction = h("div", { class: "card auction", id: "auction" }, h("h2", {}, "Auction"),
      h("p", {}, `${who(a.seller)} sells `, a.kind === "trump" ? ["the best trump ", card(a.card, g)] : "a face-down card, unseen"),
      h("p", { class: "big-number" }, a.high_bidder === null ? "No bid yet" : `${a.high_bid} chips`),
      a.high_bidder !== null ? h("p", {}, `High bidder: ${who(a.high_bidder)}`) : null,
      h("p", { class: "muted small" }, `Still bidding: ${(a.bidders || []).map(who).join(", ") || "nobody"}` +
        (s.max_bid ? ` · the bidder's limit ${s.max_bid}` : "")));
  }
  const history = (s.history || []).length ? h("details", { class: "card" }, h("summary", {}, "Deals so far"),
    h("ul", {}, s.history.map((d) => h("li", {}, `Deal ${d.deal}: ${d.winner === null ? "carried over" : who(d.winner)} — ${plural(d.amount, "chip")}`))))
    : null;
  return h("div", { class: "layout speculation" }, h("div", { class: "row" }, trumpBox, potBox), auction, revealed, seats, history);
}
