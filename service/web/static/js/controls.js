// Legal actions as controls: a complete action is a button; a template (a field holding
// {"min", "max"}) is a number input and a button, its label saying once what it is and its range
// ("Bid (4 to 32 chips)"). The board (draw/play.js) plays the same actions on its pieces; this
// list is the keyboard and screen-reader path.
import { h } from "./dom.js";

// The action's words with its range said once: "Bid 4–32 chips" → "Bid (4 to 32 chips)",
// "Buy 1–18 Stores" → "Buy (1 to 18) Stores", "Fill 0–5 of the announcement (0 = pass)" →
// "Fill (0 to 5) of the announcement (0 = pass)".
export function rangeLabel(label, range) {
  const span = `${range.min}–${range.max}`;
  const at = label.indexOf(span);
  if (at < 0) return `${label} (${range.min} to ${range.max})`;
  const before = label.slice(0, at).trimEnd();
  const after = label.slice(at + span.length).trim();
  if (!after || /^[a-z]+$/.test(after)) return `${before} (${range.min} to ${range.max}${after ? ` ${after}` : ""})`;
  return `${before} (${range.min} to ${range.max}) ${after}`;
}

function templateFields(action) {
  return Object.entries(action).filter(([, v]) => v && typeof v === "object" && "min" in v && "max" in v);
}

export function actionControls(legal, labels, type, post) {
  const box = h("div", { class: "controls" });
  legal.forEach((action, i) => {
    const label = labels[i] || action.type;
    const fields = templateFields(action);
    if (!fields.length) {
      box.append(h("button", { type: "button", class: "action", dataset: { action: JSON.stringify(action) },
        onclick: () => post(action) }, label));
      return;
    }
    const inputs = fields.map(([name, range]) => {
      const id = `a${i}-${name}`;
      return [name, h("input", { type: "number", id, name, min: range.min, max: range.max, step: 1, value: range.min,
        inputmode: "numeric", required: true }),
        fields.length > 1 ? `${label}: ${name} (${range.min} to ${range.max})` : rangeLabel(label, range), id];
    });
    const form = h("form", { class: "template", dataset: { action: JSON.stringify(action) } },
      inputs.map(([, input, text, id]) => [h("label", { for: id }, text), " ", input]),
      h("button", { type: "submit", class: "action primary" }, action.type === "bid" ? "Bid" : "Go"));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const chosen = { ...action };
      for (const [name, input] of inputs) {
        const n = Number(input.value);
        const range = action[name];
        if (!Number.isInteger(n) || n < range.min || n > range.max) {
          input.setCustomValidity(`between ${range.min} and ${range.max}`);
          input.reportValidity();
          return;
        }
        input.setCustomValidity("");
        chosen[name] = n;
      }
      post(chosen);
    });
    box.append(form);
  });
  return box;
}
