// Big Shot: the districts with their cubes, the promoter, the auction, loans. Played on the
// board (draw/play.js): the promoter's starting space on the track, the bid, pass and loan in
// the auction card, and placement by picking a cube won and clicking a district.
import { h, plural } from "../dom.js";
import { boardPlay, tint, initials } from "./play.js";

const info = (g, c) => (g.colours || {})[c] || { colour: "#999999", name: c };
const colourName = (g, c) => info(g, c).name;
const letters = (g) => initials(Object.entries(g.colours || {}).map(([k, v]) => [k, v.name]));

// A cube: its colour, its colour's letter (not told apart by colour alone), an image to the
// accessibility tree named by count and colour.
function cube(c, g, n) {
  const name = `${n || 1} ${colourName(g, c)} ${n > 1 ? "cubes" : "cube"}`;
  return h("span", { class: "cube-group", role: "img", "aria-label": name, title: name },
    h("span", { class: "cube inked", style: tint(info(g, c).colour) }, letters(g)[c] || ""),
    n > 1 ? h("span", { class: "cube-n" }, `×${n}`) : null);
}

export function draw(s, ctx) {
  const { g, who, viewer } = ctx;
  const play = boardPlay(ctx, "big-shot");

  // the promoter's starting space: a space of the track
  const start = play.one((a) => a.type === "choose_start_space");
  play.claim(start);
  const spaces = h("ol", { class: "promoter-track", start: 0, "aria-label": "The promoter's track" },
    (s.spaces || []).map((lot, i) => {
      const can = start && i >= start.action.space.min && i <= start.action.space.max && lot.length;
      const question = `Put the promoter on space ${i}?`;
      return h("li", { class: (i === s.promoter ? "promoter " : "") + (lot.length ? "" : "empty") + (can ? " has-move" : ""),
        title: `space ${i}` }, h("span", { class: "n" }, i),
      i === s.promoter ? h("span", { class: "badge gold", role: "img", title: "the promoter", "aria-label": "the promoter" }, "P") : null,
      h("span", { class: "lot" }, lot.map((c) => cube(c, g))),
      can ? play.move(start, { class: "cover", "aria-label": `Put the promoter on space ${i}` }, null, question,
        { type: "choose_start_space", space: i }) : null);
    }));
  const track = h("div", { class: "card", id: "track" }, h("h2", {}, `Auction ${s.auction_number} of ${s.auctions_total}`),
    h("p", {}, `Promoter on space ${s.promoter ?? "—"}` + (s.last_roll ? ` · last roll ${s.last_roll}` : "") + ` · active ${who(s.active)}`),
    start ? h("p", { class: "board-hint" }, "Your move: click the space the promoter starts on.") : null,
    spaces);

  // placement: the cube picked (or the only colour left), then a district
  const places = play.find((a) => a.type === "place");
  const colours = [...new Set(places.map((e) => e.action.colour))];
  let held = play.mem.picked.colour;
  if (!colours.includes(held)) held = colours.length === 1 ? colours[0] : null;
  places.forEach((e) => play.claim(e));
  const districts = h("div", { class: "card", id: "districts" }, h("h2", {}, "Districts"),
    places.length ? h("p", { class: "board-hint" }, held ? `Your move: click a district to place the ${colourName(g, held)} cube.`
      : "Your move: pick one of the cubes you won, then click a district.") : null,
    h("ul", { class: "districts" }, (s.districts || []).map((d) => {
      const here = held ? places.find((e) => e.action.colour === held && e.action.district === d.name) : null;
      return h("li", { class: `district ${d.kind}${d.sold ? " sold" : ""}${here ? " has-move" : ""}` },
        h("div", {}, h("strong", {}, d.name), h("span", { class: "small muted" }, ` · ${d.kind}${d.value ? ` · value ${d.value}` : ""}`)),
        h("div", { class: "cubes" }, Object.entries(d.cubes || {}).filter(([, n]) => n).map(([c, n]) => cube(c, g, n)),
          d.total ? null : h("span", { class: "muted small" }, "no cubes")),
        d.sold ? h("div", { class: "small" }, d.owner !== null ? `Owned by ${who(d.owner)}` : d.colour ? `${colourName(g, d.colour)} (nobody plays it)` : "Nobody's")
          : null,
        (d.parks || []).length ? h("div", { class: "small muted" }, `next to ${d.parks.join(", ")}`) : null,
        here ? play.move(here, { class: "cover" }, null, `${here.label}? ${d.name} then holds ${(d.total || 0) + 1} of 7 cubes.`) : null);
    })));

  const seats = h("div", { class: "card" }, h("h2", {}, "Players"),
    h("ul", { class: "players" }, (s.seats || []).map((p) => h("li", { class: (s.to_act || []).includes(p.seat) ? "acting" : "" },
      cube(p.colour, g), " ", h("strong", {}, who(p.seat)), ` · cash ${p.cash} · ${plural(p.loans, "loan")}`,
      h("span", { class: "small muted" }, p.next_loan === null && p.no_loan ? ` (no loan: ${p.no_loan})` : ` (a loan pays ${p.next_loan} now)`),
      h("div", { class: "small" }, (p.districts || []).length ? `Districts: ${p.districts.join(", ")}` : "No district yet")))),
    (s.dummy_colours || []).length ? h("p", { class: "small muted" }, `Nobody plays ${s.dummy_colours.map((c) => colourName(g, c)).join(", ")}.`) : null,
    h("p", { class: "small muted" }, `Loan cards left: ${s.loan_cards_left}`));

  let auction = null;
  if (s.auction) {
    const a = s.auction;
    auction = h("div", { class: "card auction", id: "auction" }, h("h2", {}, `Auction of space ${a.space}`),
      h("p", {}, "Lot: ", a.lot.map((c) => cube(c, g))),
      h("p", { class: "big-number" }, a.high_bidder === null ? "No bid yet" : `${a.high_bid} by ${who(a.high_bidder)}`),
      h("p", { class: "small" }, `Bidding now: ${who(a.bidder)}` +
        (a.passed.some(Boolean) ? ` · passed: ${a.passed.map((p, i) => (p ? who(i) : null)).filter(Boolean).join(", ")}` : "")),
      auctionMoves(play, s, viewer));
  }
  const placing = s.placing ? h("div", { class: "card auction", id: "placing" }, h("h2", {}, "Placing"),
    h("p", {}, `${who(s.placing.seat)} places the cubes won: `, places.length && colours.length > 1
      ? colours.map((c) => play.chooser("colour", c, { "aria-label": `Pick the ${colourName(g, c)} cube to place` },
        cube(c, g, s.placing.cubes.filter((x) => x === c).length)))
      : (s.placing.cubes || []).map((c) => cube(c, g)))) : null;
  return h("div", { class: "layout big-shot" }, play.confirmBar(), h("div", { class: "row" }, auction || placing, seats),
    track, districts, play.rest());
}

// The bidder's moves in the auction card: an amount and Bid, Pass, a loan (what it pays now
// and what it costs at the end, as the view says).
function auctionMoves(play, s, viewer) {
  const bid = play.one((a) => a.type === "bid");
  const pass = play.one((a) => a.type === "pass");
  const borrow = play.one((a) => a.type === "borrow");
  if (!bid && !pass && !borrow) return null;
  const me = (s.seats || []).find((p) => p.seat === viewer) || {};
  const parts = [];
  if (bid) {
    play.claim(bid);
    const range = bid.action.amount;
    const amount = () => play.mem.picked.bid ?? range.min;
    parts.push(play.amount("bid", range, `Bid (${range.min} to ${range.max})`),
      h("button", { type: "button", class: "playable move primary", id: "board-bid", dataset: { key: "board-bid" },
        onclick: () => play.ask({ type: "bid", amount: amount() }, `Bid ${amount()} for the lot?`,
          `You pay ${amount()} of your ${me.cash ?? "?"} cash if nobody bids more.`) }, "Bid"));
  }
  if (pass) parts.push(play.move(pass, { id: "board-pass" }, "Pass", "Pass? You are out of this auction."));
  if (borrow) {
    parts.push(play.move(borrow, { id: "board-borrow" }, me.next_loan ? `Take a loan (+${me.next_loan})` : "Take a loan",
      `Take a loan? You get ${me.next_loan ?? "?"} now and repay 10 at the end.`));
  }
  return h("div", { class: "board-moves-inline", role: "group", "aria-label": "Your bid" }, parts);
}

// What the replay's jumps land on (replay.js): each kind names the events that open one (the
// event's own version is where the jump lands) and how a person numbers them. A kind with no
// event in a game is left out.
export const jumps = [{ kind: "Auction", plural: "Auctions", types: ["die_rolled"], number: (d) => d.auction }];
