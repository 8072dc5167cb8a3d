// Pieces of the forms that make a game (the lobby's new game, a challenge, "Play now"): a game
// option's input with its default, the options read back, the clock with the "Rated" box.
import { h } from "./dom.js";
import { CLOCKS } from "./ratings.js";

// One game option as declared by GET /v1/game-types (`prefix`: the ids' start, one form a page).
export function optionInput(name, spec, prefix = "opt") {
  const id = `${prefix}-${name}`;
  const label = name.replace(/_/g, " ");
  if (spec.type === "boolean") {
    return h("div", { class: "field check" },
      h("input", { type: "checkbox", id, name, checked: spec.default === true }),
      h("label", { for: id }, label));
  }
  if (spec.choices) {
    return h("div", { class: "field" }, h("label", { for: id }, label),
      h("select", { id, name }, spec.choices.map((c) => h("option", { value: String(c), selected: c === spec.default },
        String(c) + (c === spec.default ? " (default)" : "")))));
  }
  return h("div", { class: "field" }, h("label", { for: id }, label),
    h("input", { type: "number", id, name, min: spec.min, max: spec.max, inputmode: "numeric",
      placeholder: spec.default === null ? "default" : String(spec.default),
      value: spec.default === null ? "" : spec.default }));
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
