// Speculation: the piles, the trump, the pot, the chips, the auction.
// Played on the board (draw/play.js): little is a board move in this game, and what is:
// your own face-down pile (reveal its top card, or offer it unseen in a blind exchange), the best
// trump in the trump box (keep it or offer it for sale), the auction card (bid an amount, pass,
// accept or decline the high bid). Nobody sees a face-down card, its owner included: nothing
// here shows one.
import { h, plural } from "../dom.js";
import { boardPlay } from "./play.js";

export function card(code, g, extra = {}) {
  const info = (g.cards || {})[code];
  if (!info) return h("span", { class: "pcard back", role: "img", title: "face-down card", "aria-label": "a face-down card" }, "🂠");
  return h("span", { class: `pcard ${info.red ? "red" : "black"}`, title: info.name, "aria-label": info.name, ...extra }, info.short);
}

export function draw(s, ctx) {
  const { g, who, viewer } = ctx;
  const play = boardPlay(ctx, "speculation");
  const one = (type) => play.one((a) => a.type === type);
  const suit = s.trump ? g.suits[s.trump] : null;
  const holder = s.best_in_dead_hand ? "the dead hand" : who(s.holder);
  const trumpBox = h("div", { class: "card trump-box" },
    h("h2", {}, "Trump"),
    suit ? [h("p", { class: `big-suit ${"DH".includes(s.trump) ? "red" : "black"}`, "aria-label": `${suit.name} are trumps` },
      suit.symbol, h("span", { class: "small" }, ` ${suit.name}`)),
    h("p", {}, "Turned up: ", card(s.turn_up, g)),
    h("p", {}, "Best trump: ", card(s.best_trump, g), ` held by ${holder}`),
    one("keep") || one("offer") ? h("div", { class: "board-moves-inline", role: "group", "aria-label": "The best trump" },
      play.move(one("keep"), { id: "board-keep" }, "Keep it", `Keep the best trump? You win the pot of ${s.pot} if it stays best.`),
      play.move(one("offer"), { id: "board-offer" }, "Offer it for sale", "Offer the best trump for sale? The others bid; you then accept or decline.")) : null]
      : h("p", { class: "muted" }, "Between deals."));
  const potBox = h("div", { class: "card pot-box" }, h("h2", {}, "Pot"),
    h("p", { class: "big-number", id: "pot" }, plural(s.pot, "chip")),
    h("p", { class: "muted small" }, `Deal ${s.deal} of ${s.deals} · dealer ${who(s.dealer)}` +
      (s.house ? ` · house ${s.house}` : "")));
  const rows = s.chips.map((chips, i) => h("tr", { class: (s.to_act || []).includes(i) ? "acting" : "" },
    h("th", { scope: "row" }, who(i), i === s.dealer ? h("span", { class: "badge", role: "img", title: "the dealer", "aria-label": "the dealer" }, "D") : null,
      i === s.holder && !s.best_in_dead_hand && s.trump ? h("span", { class: "badge gold", role: "img", title: "holds the best trump", "aria-label": "holds the best trump" }, "★") : null),
    h("td", { class: "num" }, chips),
    h("td", {}, h("span", { class: "pile", role: "img", "aria-label": plural(s.piles[i], "face-down card") },
      Array.from({ length: s.piles[i] }, () => h("span", { class: "pcard back mini", "aria-hidden": "true" }, "")),
      s.piles[i] ? "" : "—"),
    i === viewer ? pileMoves(play, one) : null)));
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
        (s.max_bid ? ` · the bidder's limit ${s.max_bid}` : "")),
      auctionMoves(play, one, s, a, viewer));
  }
  const history = (s.history || []).length ? h("details", { class: "card" }, h("summary", {}, "Deals so far"),
    h("ul", {}, s.history.map((d) => h("li", {}, `Deal ${d.deal}: ${d.winner === null ? "carried over" : who(d.winner)} — ${plural(d.amount, "chip")}`))))
    : null;
  return h("div", { class: "layout speculation" }, play.confirmBar(), h("div", { class: "row" }, trumpBox, potBox), auction, seats, revealed,
    history, play.rest());
}

// The seat's own pile: reveal its top card, or in a blind exchange offer it unseen or keep it.
function pileMoves(play, one) {
  const moves = [
    play.move(one("reveal"), { id: "board-reveal", class: "pile-move" }, "Reveal top card", "Reveal the top card of your pile? Everyone sees it."),
    play.move(one("offer_blind"), { id: "board-offer-blind" }, "Offer it unseen", "Offer your top face-down card for sale, unseen?"),
    play.move(one("keep_blind"), { id: "board-keep-blind" }, "Keep it", "Keep your face-down card?")].filter(Boolean);
  return moves.length ? h("td", { class: "row-moves" }, moves) : null;
}

// The auction: the bidder's amount, Bid and Pass; the seller's Accept or Decline of the high bid.
function auctionMoves(play, one, s, a, viewer) {
  const bid = one("bid");
  const parts = [];
  if (bid) {
    play.claim(bid);
    const range = bid.action.amount;
    const amount = () => play.mem.picked.bid ?? range.min;
    const mine = s.chips[viewer];
    parts.push(play.amount("bid", range, `Bid (${range.min} to ${range.max} chips)`),
      h("button", { type: "button", class: "playable move primary", id: "board-bid", dataset: { key: "board-bid" },
        onclick: () => play.ask({ type: "bid", amount: amount() }, `Bid ${plural(amount(), "chip")}?`,
          `If the seller accepts you pay ${amount()} of your ${mine} chips; the pot is ${s.pot}.`) }, "Bid"));
  }
  parts.push(play.move(one("pass"), { id: "board-pass" }, "Pass", "Pass? You are out of this sale."),
    play.move(one("accept"), { id: "board-accept" }, `Accept ${plural(a.high_bid ?? 0, "chip")}`,
      `Sell for ${plural(a.high_bid ?? 0, "chip")}? The high bidder pays you and holds the card from now on.`),
    play.move(one("decline"), { id: "board-decline" }, "Decline (keep it)", "Decline the bid and keep the card?"));
  return parts.some(Boolean) ? h("div", { class: "board-moves-inline", role: "group", "aria-label": "Your move in the sale" }, parts) : null;
}

// What the replay's jumps land on (replay.js): each kind names the events that open one (the
// event's own version is where the jump lands) and how a person numbers them. A kind with no
// event in a game is left out.
export const jumps = [
  { kind: "Deal", plural: "Deals", types: ["antes"], number: (d) => d.deal },
  { kind: "Auction", plural: "Auctions", types: ["offer", "offer_blind"] }];
