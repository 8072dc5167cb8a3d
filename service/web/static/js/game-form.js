// Pieces of the forms that make a game (the lobby's new game, a challenge, "Play now"): a game
// option's input with its default, the options read back, the clock with the "Rated" box.
import { h } from "./dom.js";
import { CLOCKS } from "./ratings.js";

// What each game option does, for players (the rules pages, /web/rules/<type>, say the same at
// more length). Option names are unique across the hosted games (tests/test_web_rules.py checks
// that every declared option has its words here).
export const OPTION_HELP = {
  hand_size: "Cards in each player's face-down pile: 3, 4 or 5 (bigger hands raise the antes).",
  ante: "Chips each player puts in the pot every deal (empty: 4, 5 or 6 by hand size).",
  dealer_ante: "Chips the dealer puts in the pot every deal (empty: the ante if given, else 6, 8 or 10 by hand size).",
  starting_chips: "Everyone's chips at the start (empty: enough for every ante of the session).",
  deals: "How many deals the session lasts (empty: two per player, so everyone deals twice).",
  jack_five_bonus: "Turning up a jack or a five from your own pile costs 1 chip, paid into the pot.",
  dead_hand: "An extra pile with no owner: if its trump is best at the end, nobody wins and the pot carries over.",
  blind_exchanges: "After each sale, players may offer the top face-down card of their own pile for sale, unseen.",
  price_cap: "No bid may be more than this many antes (empty: no cap).",
  edition: "dice: the 1992 edition with a symbol die and a number die; tiles: action and move tiles drawn from bags.",
  board: "plain or star: the star side's share prices are lower, so money is harder to earn.",
  rounds: "How many rounds the game lasts (empty: 11, 10, 8 or 7 by the number of players).",
};

// One game option as declared by GET /v1/game-types (`prefix`: the ids' start, one form a page),
// with its words for players as a tooltip and as the control's accessible description.
export function optionInput(name, spec, prefix = "opt") {
  const id = `${prefix}-${name}`;
  const label = name.replace(/_/g, " ");
  const help = OPTION_HELP[name] || null;
  const helpId = help ? `${id}-help` : null;
  const described = { title: help, "aria-describedby": helpId };
  const helpNode = help ? h("span", { id: helpId, hidden: true }, help) : null;
  if (spec.type === "boolean") {
    return h("div", { class: "field check", title: help },
      h("input", { type: "checkbox", id, name, checked: spec.default === true, ...described }),
      h("label", { for: id }, label), helpNode);
  }
  if (spec.choices) {
    return h("div", { class: "field", title: help }, h("label", { for: id }, label),
      h("select", { id, name, ...described }, spec.choices.map((c) => h("option", { value: String(c), selected: c === spec.default },
        String(c) + (c === spec.default ? " (default)" : "")))), helpNode);
  }
  return h("div", { class: "field", title: help }, h("label", { for: id }, label),
    h("input", { type: "number", id, name, min: spec.min, max: spec.max, inputmode: "numeric",
      placeholder: spec.default === null ? "default" : String(spec.default),
      value: spec.default === null ? "" : spec.default, ...described }), helpNode);
}

// The options as chosen in `box` (an integer left empty: the game's default).
export function readOptions(box, type) {
  const opts = {};
  for (const [name, spec] of Object.entries(type.options)) {
    const input = box.querySelector(`[name="${CSS.escape(name)}"]`);
    if (!input) continue;
    if (spec.type === "boolean") opts[name] = input.checked;
    else if (spec.type === "integer") { if (input.value !== "") opts[name] = Number(input.value); }
    else opts[name] = input.value;
  }
  return opts;
}

// The clock (a preset: seconds a move; "No clock" unless `clockRequired`) and the "Rated"
// box: ticking it requires a clock (5 minutes when there was none). `ids`: {clock, none,
// rated} (the rated box is left out without `rated`). Returns {nodes, clock, rated}.
export function clockAndRated(ids, { ratedHint, onRated, clockHint } = {}) {
  const clockHintId = `${ids.clock}-hint`;
  const clock = h("select", { id: ids.clock, name: "turn_timeout", "aria-describedby": clockHint === null ? null : clockHintId },
    h("option", { value: "", id: ids.none }, "No clock"),
    CLOCKS.map(([secs, text]) => h("option", { value: String(secs) }, `${text} per move`)));
  const clockField = h("div", { class: "field" }, h("label", { for: ids.clock }, "Clock"), clock,
    clockHint === null ? null : h("p", { class: "hint", id: clockHintId },
      clockHint || "A seat whose time runs out has that move played for it by the random bot."));
  if (!ids.rated) return { nodes: [clockField], clock, rated: null };
  const hintId = `${ids.rated}-hint`;
  const rated = h("input", { type: "checkbox", id: ids.rated, name: "rated", "aria-describedby": hintId });
  rated.addEventListener("change", () => {
    const on = rated.checked;
    clock.querySelector(`#${CSS.escape(ids.none)}`).disabled = on;
    if (on && clock.value === "") clock.value = "300";
    if (onRated) onRated(on);
  });
  return {
    nodes: [h("div", { class: "field check rated-check" }, rated,
      h("label", { for: ids.rated }, h("strong", {}, "Rated"), " (changes your rating)")),
    h("p", { class: "hint", id: hintId }, ratedHint || "Needs a clock."), clockField],
    clock, rated,
  };
}

// How long a challenge waits for its answer (seconds; the service's default is 10 minutes).
export const EXPIRIES = [[120, "2 minutes"], [600, "10 minutes"], [3600, "1 hour"], [86400, "1 day"], [604800, "7 days"]];

// When "Play now" completes a table with bots (seconds; "" never: people only).
export const BOTS_AFTER = [["0", "Right away"], ["5", "After 5 seconds"], ["20", "After 20 seconds"],
  ["60", "After 1 minute"], ["", "Never (people only)"]];

// A game type's short title: "Big Shot" of "Big Shot — district auctions".
export const shortTitle = (type) => type.title.split(" — ")[0];
