// Legal actions as controls: a complete action is a button; a template (a field holding
// {"min", "max"}) is a number input with its range and a button.
import { h } from "./dom.js";

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
        inputmode: "numeric", required: true, "aria-describedby": `${id}-r` }),
        h("span", { id: `${id}-r`, class: "muted small" }, `${range.min}–${range.max}`), id];
    });
    const form = h("form", { class: "template", dataset: { action: JSON.stringify(action) } },
      inputs.map(([name, input, range, id]) => h("label", { for: id }, `${label} — ${name}: `, input, " ", range)),
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
