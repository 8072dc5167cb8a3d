// Spekulation: the track with the markers, the price tables, shares, hand and committed
// cards, the dice or tiles.
import { h, plural } from "../dom.js";

function chip(company, g, text) {
  const info = (g.companies || {})[company] || { name: company, colour: "#999" };
  return h("span", { class: "company", style: { "--c": info.colour }, title: info.name }, text === undefined ? info.name : text);
}

export function companyCard(card, g) {
  if (card === "holiday") return h("span", { class: "scard holiday", title: "Bank holiday" }, "Holiday");
  const info = (g.companies || {})[card] || { name: card, colour: "#999" };
  return h("span", { class: "scard", style: { "--c": info.colour }, title: info.name }, info.name);
}

export function draw(s, { g, who, viewer }) {
  const companies = s.companies || {};
  const at = {};
  for (const [c, info] of Object.entries(companies)) (at[info.position] = at[info.position] || []).push(c);
  const last = s.last_track_space || 60;
  const sections = [];
  for (let start = 1; start <= last; start += 10) {
    const end = Math.min(start + 9, last);
    const cells = [];
    for (let p = start; p <= end; p++) {
      cells.push(h("li", { class: "space", title: `space ${p}` }, h("span", { class: "n" }, p),
        (at[p] || []).map((c) => h("span", { class: "marker", style: { "--c": g.companies[c].colour }, title: g.companies[c].name,
          "aria-label": `${g.companies[c].name} on space ${p}` }))));
    }
    sections.push(h("ol", { class: "section", "aria-label": `spaces ${start} to ${end}` }, cells));
  }
  const startBox = h("div", { class: "ends" },
    h("div", {}, h("strong", {}, "Start: "), (at[0] || []).map((c) => chip(c, g)), (at[0] || []).length ? null : "—"),
    h("div", {}, h("strong", {}, "END: "), (s.arrivals || []).map((c, i) => chip(c, g, `${i + 1}. ${g.companies[c].name}`)),
      (s.arrivals || []).length ? null : "—"));
  const track = h("div", { class: "card track", id: "track" }, h("h2", {}, "The track"), startBox, h("div", { class: "sections" }, sections));

  const me = viewer === null || viewer === undefined ? null : (s.seats || []).find((x) => x.seat === viewer);
  const order = Object.keys(companies).sort((a, b) => companies[a].rank - companies[b].rank);
  const table = h("div", { class: "card" }, h("h2", {}, "Companies"),
    h("div", { class: "scroll" }, h("table", { class: "grid" },
      h("thead", {}, h("tr", {}, h("th", {}, "Company"), h("th", { class: "num" }, "Space"), h("th", { class: "num" }, "Rank"),
        h("th", { class: "num" }, "Price"), h("th", { class: "num" }, "Supply"), me ? h("th", { class: "num" }, "Yours") : null)),
      h("tbody", {}, order.map((c) => {
        const info = companies[c];
        return h("tr", {}, h("th", { scope: "row" }, chip(c, g)),
          h("td", { class: "num" }, info.at_end ? "END" : info.at_start ? "start" : info.position),
          h("td", { class: "num" }, info.rank), h("td", { class: "num" }, info.price), h("td", { class: "num" }, info.supply),
          me ? h("td", { class: "num" }, me.shares[c] || 0) : null);
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
    (s.last_reveal || []).length ? h("p", {}, "Last cards revealed: ", s.last_reveal.map((c) => companyCard(c, g))) : null);

  const hand = s.hand ? h("div", { class: "card hand", id: "hand" }, h("h2", {}, "Your hand"),
    h("p", {}, s.hand.length ? s.hand.map((c) => companyCard(c, g)) : "empty"),
    s.committed_card ? h("p", {}, "Committed, face down: ", companyCard(s.committed_card, g)) : null) : null;

  const players = h("div", { class: "card" }, h("h2", {}, "Players"),
    h("ul", { class: "players" }, (s.seats || []).map((p) => h("li", { class: (s.to_act || []).includes(p.seat) ? "acting" : "" },
      h("strong", {}, who(p.seat)), ` · money ${p.money} · ${plural(p.hand_count, "card")} in hand · ${p.deck_count} to draw`,
      p.committed ? h("span", { class: "badge" }, "committed") : null,
      h("div", { class: "small" }, Object.entries(p.shares).filter(([, n]) => n).map(([c, n]) => chip(c, g, `${g.companies[c].name} ×${n}`)),
        Object.values(p.shares).some((n) => n) ? null : "no shares"),
      (p.discard || []).length ? h("div", { class: "small muted" }, "Played: ", p.discard.map((c) => ((g.cards || {})[c] || {}).name || c).join(", ")) : null,
      s.hands && s.hands[p.seat] ? h("div", { class: "small" }, "Hand: ", s.hands[p.seat].map((c) => companyCard(c, g))) : null))));
  return h("div", { class: "layout spekulation" }, track, h("div", { class: "row" }, turn, hand), table, players, prices);
}
