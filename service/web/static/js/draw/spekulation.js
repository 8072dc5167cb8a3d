// Spekulation: the track with the markers, the price tables, shares, hand and committed
// cards, the dice or tiles.
// Played on the board (draw/play.js): a company taken or traded from its row of the companies'
// table, a marker moved on the track (+1 / −1), a card played from the hand; Pass in the turn box.
import { h, plural } from "../dom.js";
import { boardPlay, tint, initials } from "./play.js";

const letters = (g) => initials(Object.entries(g.companies || {}).map(([k, v]) => [k, v.name]));

function chip(company, g, text) {
  const info = (g.companies || {})[company] || { name: company, colour: "#999999" };
  return h("span", { class: "company inked", style: tint(info.colour), title: info.name },
    h("span", { class: "letter", "aria-hidden": "true" }, letters(g)[company] || ""), " ", text === undefined ? info.name : text);
}

// A marker on the track: its colour and its company's letter, an image named for the
// accessibility tree.
function marker(c, g, p) {
  const info = g.companies[c];
  return h("span", { class: "marker lettered inked", style: tint(info.colour), role: "img", title: info.name,
    "aria-label": `${info.name} on space ${p}` }, letters(g)[c] || "");
}

// What a share costs or pays at a price (a negative price turns it round: the rules say a
// buyer receives it from the bank, a seller pays it).
function priceWords(side, price) {
  if (side === "buy") return price >= 0 ? `you pay ${price}` : `the bank pays you ${-price}`;
  return price >= 0 ? `you receive ${price}` : `you pay ${-price}`;
}

export function companyCard(card, g) {
  if (card === "holiday") return h("span", { class: "scard holiday", title: "Bank holiday" }, "Holiday");
  const info = (g.companies || {})[card] || { name: card, colour: "#999999" };
  return h("span", { class: "scard", style: { "--c": info.colour }, title: info.name },
    h("span", { class: "letter inked", style: tint(info.colour), "aria-hidden": "true" }, letters(g)[card] || ""), " ", info.name);
}

export function draw(s, ctx) {
  const { g, who, viewer } = ctx;
  const play = boardPlay(ctx, "spekulation");
  const companies = s.companies || {};
  const direction = s.action === "-1" ? "down" : "up";
  const moveOf = (c) => play.one((a) => a.type === "rank_move" && a.company === c);
  const moveQuestion = (c) => `Move ${g.companies[c].name} ${direction} one rank (${s.action || "+1"})?`;
  const placedMarker = (c, p) => {
    const m = moveOf(c);
    return m ? play.move(m, { class: "marker-move", "aria-label": `Move ${g.companies[c].name} ${direction} (on space ${p})` },
      marker(c, g, p), moveQuestion(c)) : marker(c, g, p);
  };
  const at = {};
  for (const [c, info] of Object.entries(companies)) (at[info.position] = at[info.position] || []).push(c);
  const last = s.last_track_space || 60;
  const sections = [];
  for (let start = 1; start <= last; start += 10) {
    const end = Math.min(start + 9, last);
    const cells = [];
    for (let p = start; p <= end; p++) {
      cells.push(h("li", { class: "space", title: `space ${p}` }, h("span", { class: "n" }, p),
        (at[p] || []).map((c) => placedMarker(c, p))));
    }
    sections.push(h("ol", { class: "section", "aria-label": `spaces ${start} to ${end}` }, cells));
  }
  const startBox = h("div", { class: "ends" },
    h("div", {}, h("strong", {}, "Start: "), (at[0] || []).map((c) => (moveOf(c)
      ? play.move(moveOf(c), { class: "chip-move", "aria-label": `Move ${g.companies[c].name} ${direction} (on the start)` }, chip(c, g), moveQuestion(c))
      : chip(c, g))), (at[0] || []).length ? null : "—"),
    h("div", {}, h("strong", {}, "END: "), (s.arrivals || []).map((c, i) => chip(c, g, `${i + 1}. ${g.companies[c].name}`)),
      (s.arrivals || []).length ? null : "—"));
  const moving = play.find((a) => a.type === "rank_move").length;
  const track = h("div", { class: "card track", id: "track" }, h("h2", {}, "The track"),
    moving ? h("p", { class: "board-hint" }, `Your move: click the marker to move ${direction} one rank.`) : null,
    startBox, h("div", { class: "sections" }, sections));

  const me = viewer === null || viewer === undefined ? null : (s.seats || []).find((x) => x.seat === viewer);
  const trading = play.find((a) => ["choose_share", "buy", "sell"].includes(a.type)).length > 0;
  const order = Object.keys(companies).sort((a, b) => companies[a].rank - companies[b].rank);
  const table = h("div", { class: "card" }, h("h2", {}, "Companies"),
    h("div", { class: "scroll" }, h("table", { class: "grid" },
      h("thead", {}, h("tr", {}, h("th", {}, "Company"), h("th", { class: "num" }, "Space"), h("th", { class: "num" }, "Rank"),
        h("th", { class: "num" }, "Price"), h("th", { class: "num" }, "Supply"), me ? h("th", { class: "num" }, "Yours") : null,
        trading ? h("th", {}, "Your move") : null)),
      h("tbody", {}, order.map((c) => {
        const info = companies[c];
        const name = g.companies[c].name;
        const take = play.one((a) => a.type === "choose_share" && a.company === c);
        const buy = play.one((a) => a.type === "buy" && a.company === c);
        const sell = play.one((a) => a.type === "sell" && a.company === c);
        const moves = [
          play.move(take, {}, "Take", `Take a share of ${name}? It is yours for the game.`),
          play.move(buy, { "aria-label": `Buy a share of ${name} at ${info.price}` }, `Buy ${info.price}`,
            `Buy a share of ${name}? At ${info.price}: ${priceWords("buy", info.price)}.`),
          play.move(sell, { "aria-label": `Sell a share of ${name} at ${info.price}` }, `Sell ${info.price}`,
            `Sell a share of ${name}? At ${info.price}: ${priceWords("sell", info.price)}.`)].filter(Boolean);
        return h("tr", {}, h("th", { scope: "row" }, chip(c, g)),
          h("td", { class: "num" }, info.at_end ? "END" : info.at_start ? "start" : info.position),
          h("td", { class: "num" }, info.rank), h("td", { class: "num" }, info.price), h("td", { class: "num" }, info.supply),
          me ? h("td", { class: "num" }, me.shares[c] || 0) : null,
          trading ? h("td", { class: "row-moves" }, moves) : null);
      })))));

  const pt = (g.price_tables || {}).boards ? g.price_tables.boards[s.board] : null;
  const prices = pt ? h("details", { class: "card" }, h("summary", {}, `Price tables (${s.board} board)`),
    h("div", { class: "scroll" }, h("table", { class: "grid small" },
      h("thead", {}, h("tr", {}, h("th", {}, "Spaces \\ rank"), [1, 2, 3, 4, 5, 6, 7, 8].map((r) => h("th", { class: "num" }, r)))),
      h("tbody", {}, pt.sections.map((row, i) => h("tr", {}, h("th", { scope: "row" }, `${i * 10 + 1}–${Math.min(i * 10 + 10, last)}`),
        row.map((v) => h("td", { class: "num" }, v)))),
        h("tr", {}, h("th", { scope: "row" }, "END"), pt.end.map((v) => h("td", { class: "num" }, v)))))),
    h("p", { class: "small muted" }, `On the start every company is worth ${g.price_tables.start_price}.` +
      (g.price_tables.reconstructed ? " The printed tables are reconstructed." : ""))) : null;

  const turn = h("div", { class: "card turn-box" }, h("h2", {}, `Turn ${s.turn || "—"}`),
    h("p", {}, `Active: ${who(s.active)}`),
    h("p", {}, s.edition === "dice" ? "Symbol die: " : "Action tile: ", h("strong", {}, (g.actions || {})[s.action] || s.action || "—"),
      s.number ? [" · ", s.edition === "dice" ? "number die: " : "move tile: ", h("strong", { class: "die" }, s.number)] : null),
    s.trade_seat !== null && s.trade_seat !== undefined ? h("p", {}, `Trading: ${who(s.trade_seat)}`) : null,
    (s.last_reveal || []).length ? h("p", {}, "Last cards revealed: ", s.last_reveal.map((c) => companyCard(c, g))) : null,
    play.one((a) => a.type === "pass") ? h("p", {}, play.move(play.one((a) => a.type === "pass"), { id: "board-pass" },
      "Pass (no trade)", "Pass? No trade for you this round.")) : null,
    trading ? h("p", { class: "board-hint" }, play.one((x) => x.type === "choose_share")
      ? "Your move: take a share in the companies' table." : "Your move: buy or sell in the companies' table, or pass.") : null);

  const plays = play.find((a) => a.type === "play");
  const hand = s.hand ? h("div", { class: "card hand", id: "hand" }, h("h2", {}, "Your hand"),
    plays.length ? h("p", { class: "board-hint" }, `Your move: click the card to play (the number: ${s.number ?? "still to come"}).`) : null,
    h("p", {}, s.hand.length ? [...new Set(s.hand)].flatMap((c) => {
      const e = plays.find((x) => x.action.card === c);
      const n = s.hand.filter((x) => x === c).length;
      const face = companyCard(c, g);
      if (!e) return Array.from({ length: n }, () => companyCard(c, g));
      return [play.move(e, { class: "card-move" }, face, c === "holiday" ? "Play the bank holiday? It is revealed with the others' cards."
        : `Play ${g.companies[c].name}? It moves ${s.number ? `${s.number} spaces` : "by the number"} when the cards are revealed.`),
      ...Array.from({ length: n - 1 }, () => companyCard(c, g))];
    }) : "empty"),
    s.committed_card ? h("p", {}, "Committed, face down: ", companyCard(s.committed_card, g)) : null) : null;

  const players = h("div", { class: "card" }, h("h2", {}, "Players"),
    h("ul", { class: "players" }, (s.seats || []).map((p) => h("li", { class: (s.to_act || []).includes(p.seat) ? "acting" : "" },
      h("strong", {}, who(p.seat)), ` · money ${p.money} · ${plural(p.hand_count, "card")} in hand · ${p.deck_count} to draw`,
      p.committed ? h("span", { class: "badge" }, "committed") : null,
      h("div", { class: "small" }, Object.entries(p.shares).filter(([, n]) => n).map(([c, n]) => chip(c, g, `${g.companies[c].name} ×${n}`)),
        Object.values(p.shares).some((n) => n) ? null : "no shares"),
      (p.discard || []).length ? h("div", { class: "small muted" }, "Played: ", p.discard.map((c) => ((g.cards || {})[c] || {}).name || c).join(", ")) : null,
      s.hands && s.hands[p.seat] ? h("div", { class: "small" }, "Hand: ", s.hands[p.seat].map((c) => companyCard(c, g))) : null))));
  return h("div", { class: "layout spekulation" }, play.confirmBar(), track, h("div", { class: "row" }, turn, hand), table, players,
    prices, play.rest());
}

// What the replay's jumps land on (replay.js): each kind names the events that open one (the
// event's own version is where the jump lands) and how a person numbers them. A kind with no
// event in a game is left out.
export const jumps = [{ kind: "Turn", plural: "Turns", types: ["turn_started"], number: (d) => d.turn }];
