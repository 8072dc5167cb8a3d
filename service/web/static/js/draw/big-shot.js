// Big Shot: the districts with their cubes, the promoter, the auction, loans.
import { h, plural } from "../dom.js";

const colourName = (g, c) => ((g.colours || {})[c] || { name: c }).name;

function cube(c, g, n) {
  const info = (g.colours || {})[c] || { colour: "#999", name: c };
  return h("span", { class: "cube", style: { "--c": info.colour }, title: info.name, "aria-label": `${n || 1} ${info.name}` }, n > 1 ? n : "");
}

export function draw(s, { g, who }) {
  const spaces = h("ol", { class: "promoter-track", start: 0, "aria-label": "The promoter's track" },
    (s.spaces || []).map((lot, i) => h("li", { class: (i === s.promoter ? "promoter " : "") + (lot.length ? "" : "empty"),
      title: `space ${i}` }, h("span", { class: "n" }, i), i === s.promoter ? h("span", { class: "badge gold", title: "the promoter" }, "P") : null,
      h("span", { class: "lot" }, lot.map((c) => cube(c, g))))));
  const track = h("div", { class: "card", id: "track" }, h("h2", {}, `Auction ${s.auction_number} of ${s.auctions_total}`),
    h("p", {}, `Promoter on space ${s.promoter ?? "—"}` + (s.last_roll ? ` · last roll ${s.last_roll}` : "") + ` · active ${who(s.active)}`),
    spaces);
  const districts = h("div", { class: "card" }, h("h2", {}, "Districts"),
    h("ul", { class: "districts" }, (s.districts || []).map((d) => h("li", { class: `district ${d.kind}${d.sold ? " sold" : ""}` },
      h("div", {}, h("strong", {}, d.name), h("span", { class: "small muted" }, ` · ${d.kind}${d.value ? ` · value ${d.value}` : ""}`)),
      h("div", { class: "cubes" }, Object.entries(d.cubes || {}).filter(([, n]) => n).map(([c, n]) => cube(c, g, n)),
        d.total ? null : h("span", { class: "muted small" }, "no cubes")),
      d.sold ? h("div", { class: "small" }, d.owner !== null ? `Owned by ${who(d.owner)}` : d.colour ? `${colourName(g, d.colour)} (nobody plays it)` : "Nobody's")
        : null,
      (d.parks || []).length ? h("div", { class: "small muted" }, `next to ${d.parks.join(", ")}`) : null))));
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
        (a.passed.some(Boolean) ? ` · passed: ${a.passed.map((p, i) => (p ? who(i) : null)).filter(Boolean).join(", ")}` : "")));
  }
  const placing = s.placing ? h("div", { class: "card auction" }, h("h2", {}, "Placing"),
    h("p", {}, `${who(s.placing.seat)} places the cubes won: `, (s.placing.cubes || []).map((c) => cube(c, g)))) : null;
  return h("div", { class: "layout big-shot" }, h("div", { class: "row" }, auction || placing, seats), track, districts);
}
