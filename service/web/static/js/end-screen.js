// The end of a scored game: the standings (place, player, score) and, under each seat, what
// made its score in the game's own terms (service/render/<game>.py `breakdown`, asked once
// from the words endpoint with `standings: true`). The standings are public at the end, so
// they are asked as the spectator, whatever seat the page plays.
import { api } from "./api.js";
import { h, replace } from "./dom.js";

const boxes = new Map();   // game id → {el, rows}: drawn again with new labels, asked once

const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "0");
const number = (n) => (n < 0 ? `−${-n}` : String(n));
const ordinal = (n) => `${n}${n % 100 >= 11 && n % 100 <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th"}`;

function table(rows, who) {
  return h("table", { class: "standings" },
    h("caption", { class: "small muted" }, "Each score is the sum of the parts listed under it."),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Place"), h("th", { scope: "col" }, "Player"),
      h("th", { scope: "col", class: "num" }, "Score"))),
    rows.map((r) => h("tbody", { class: r.winner ? "standing winner" : "standing", dataset: { seat: r.seat, score: r.score } },
      h("tr", { class: "standing-head" },
        h("td", { class: "place" }, r.place ? ordinal(r.place) : "–", r.winner ? h("span", { class: "badge gold", title: "wins the game" }, "wins") : null),
        h("th", { scope: "row" }, who(r.seat)),
        h("td", { class: "num score" }, number(r.score))),
      h("tr", { class: "standing-parts" }, h("td", { colspan: 3 },
        h("ul", { class: "parts", "aria-label": `What made ${who(r.seat)}'s score` },
          r.parts.map((p) => h("li", { class: "part", dataset: { amount: p.amount } },
            h("span", { class: "part-label" }, p.label), h("span", { class: "num part-amount" }, signed(p.amount)))),
          h("li", { class: "part total" }, h("span", { class: "part-label" }, "Score"),
            h("span", { class: "num part-amount" }, `= ${number(r.score)}`))),
        r.adds_up ? null : h("p", { class: "error small" }, "These parts do not add up to the score the rules computed: please report it."),
        r.notes.map((n) => h("p", { class: "small muted note" }, n)))))));
}

// The end screen's card for a scored game (the same element each call: the standings are
// asked once, and drawn again with `who`'s labels).
export function endScreen(gameId, who) {
  let box = boxes.get(gameId);
  if (!box) {
    box = { el: h("section", { class: "card end-screen", id: "end-screen", "aria-labelledby": "end-screen-h" }), rows: null };
    boxes.set(gameId, box);
    replace(box.el, h("h2", { id: "end-screen-h" }, "Standings"), h("p", { class: "muted" }, "Counting the scores…"));
    api.words(gameId, null, { standings: true }).then((answer) => {
      box.rows = answer.standings || [];
      draw(box, who);
      document.body.dataset.standings = "shown";
    }).catch((err) => {
      replace(box.el, h("h2", { id: "end-screen-h" }, "Standings"),
        h("p", { class: "error" }, `The standings could not be read: ${err.message}`));
    });
  } else if (box.rows) {
    draw(box, who);
  }
  return box.el;
}

function draw(box, who) {
  replace(box.el, h("h2", { id: "end-screen-h" }, "Standings"), h("div", { class: "scroll" }, table(box.rows, who)));
}
