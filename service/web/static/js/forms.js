// Form pieces of the account pages: a labelled input with its rules and its error line, the
// API's error shown next to the field it names (error.details.field), recovery codes shown
// once with a download, a copy button. Every text goes in as text.
import { h, replace } from "./dom.js";

// A labelled input: {wrap, input, error}. `field` is the API's name for it (error.details.field).
export function inputField(id, label, { type = "text", field, hint, autocomplete, ...attrs } = {}) {
  const hintId = hint ? `${id}-hint` : null;
  const errorId = `${id}-error`;
  const input = h("input", { id, name: field || id, type, autocomplete, "aria-describedby": [hintId, errorId].filter(Boolean).join(" "),
    dataset: field ? { field } : {}, ...attrs });
  const error = h("p", { id: errorId, class: "field-error error", "aria-live": "polite" });
  const wrap = h("div", { class: "field" }, h("label", { for: id }, label), input,
    hint ? h("p", { id: hintId, class: "hint" }, hint) : null, error);
  return { wrap, input, error };
}

// The form's own error line (for an error not about one field).
export function formError(id) {
  return h("p", { id, class: "form-error error", role: "alert" });
}

export function clearErrors(form) {
  form.querySelectorAll(".field-error, .form-error").forEach((el) => { el.textContent = ""; });
  form.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
}

// The API's error next to the field it names, else on the form's own line; `text` may put it
// in other words (a function of the error, or null to keep the API's message).
export function showError(form, err, text = null) {
  const message = (text && text(err)) || err.message;
  const field = err.details && err.details.field;
  const input = field ? form.querySelector(`[data-field="${CSS.escape(String(field))}"]`) : null;
  if (input) {
    input.setAttribute("aria-invalid", "true");
    const slot = document.getElementById(`${input.id}-error`);
    if (slot) slot.textContent = message;
    input.focus();
    return;
  }
  const line = form.querySelector(".form-error");
  if (line) line.textContent = message;
}

// Run `work` with the form's submit button disabled (one request at a time).
export async function busy(form, work) {
  const button = form.querySelector("button[type=submit]");
  if (button) button.disabled = true;
  form.setAttribute("aria-busy", "true");
  try { return await work(); } finally {
    if (button) button.disabled = false;
    form.removeAttribute("aria-busy");
  }
}

export function minutes(seconds) {
  const n = Math.max(1, Math.ceil((seconds || 60) / 60));
  return `${n} minute${n === 1 ? "" : "s"}`;
}

// Copy `text()` to the clipboard (the Clipboard API where the browser gives it, else the
// selected field's copy command).
export function copyButton(text, label = "Copy", select = null) {
  const button = h("button", { type: "button", class: "copy" }, label);
  button.addEventListener("click", async () => {
    let ok = false;
    try {
      await navigator.clipboard.writeText(text());
      ok = true;
    } catch {
      if (select) {
        select.select();
        try { ok = document.execCommand("copy"); } catch { ok = false; }
      }
    }
    button.textContent = ok ? "Copied" : "Select and copy it yourself";
    setTimeout(() => { button.textContent = label; }, 2500);
  });
  return button;
}

// Recovery codes shown once: the warning, the codes, a .txt download and a copy button.
export function recoveryCodes(codes, username) {
  const text = [`Recovery codes for ${username} (Speculation games)`,
    `Made ${new Date().toLocaleString()}. Each code resets the password once.`, "", ...codes, ""].join("\n");
  const url = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
  const list = h("ol", { class: "codes", id: "recovery-codes", "aria-label": "Recovery codes" },
    codes.map((code) => h("li", {}, h("code", {}, code))));
  return h("section", { class: "card codes-box", "aria-labelledby": "codes-h" },
    h("h2", { id: "codes-h" }, "Save these recovery codes now"),
    h("p", { class: "warning", role: "alert" },
      "They are shown only this once. There is no email: if you forget your password, one of these codes " +
      "sets a new one (each code works once). Keep them somewhere safe, away from this device."),
    list,
    h("div", { class: "actions" },
      h("a", { class: "button primary", id: "download-codes", href: url,
        download: `speculation-recovery-codes-${username}.txt` }, "Download as .txt"),
      copyButton(() => codes.join("\n"), "Copy codes")));
}

