// Account settings: personal API tokens (list, create with scopes and an expiry: shown once;
// revoke), the signed-in sessions, the password, signing out everywhere, new recovery codes,
// closing the account; who may challenge the account (anyone or nobody). Every change is a POST,
// PUT or DELETE with the cookie and X-CSRF-Token.
import { account, matching, ApiError } from "./api.js";
import { h, replace, $ } from "./dom.js";
import { nav, toast, when } from "./ui.js";
import { inputField, formError, clearErrors, showError, busy, copyButton, recoveryCodes } from "./forms.js";
import { forgetSession } from "./session.js";

const main = $("#main");
const SCOPES = [["play", "take seats and play"], ["read", "read your games, views and stream"],
  ["account", "manage tokens, the password and the account"]];
let me = null;

const els = {
  tokens: h("section", { class: "card", id: "tokens", "aria-labelledby": "tokens-h" }),
  created: h("div", { id: "new-token-box" }),
  sessions: h("section", { class: "card", id: "sessions", "aria-labelledby": "sessions-h" }),
};

function errorOf(err) {
  return err instanceof ApiError ? err : { message: `The service did not answer: ${err.message}`, details: {} };
}

function words(err) {
  if (err.code === "wrong_password") return "That is not your current password.";
  if (err.status === 401) return "You are signed out (the session ended): sign in again.";
  return null;
}

// A button that asks once more, in place, before it acts (no dialog box).
function confirmButton(label, question, act, { danger = false, id } = {}) {
  const box = h("span", { class: "confirm" });
  const first = h("button", { type: "button", class: danger ? "danger" : null, id }, label);
  first.addEventListener("click", () => {
    const yes = h("button", { type: "button", class: "danger confirm-yes" }, `Yes, ${label.toLowerCase()}`);
    const no = h("button", { type: "button" }, "Cancel");
    no.addEventListener("click", () => { replace(box, first); first.focus(); });
    yes.addEventListener("click", async () => {
      yes.disabled = true;
      try { await act(); } finally { yes.disabled = false; }
    });
    replace(box, h("span", { class: "small" }, question, " "), yes, no);
    yes.focus();
  });
  box.append(first);
  return box;
}

async function loadTokens() {
  let tokens;
  try {
    tokens = (await account.tokens()).tokens;
  } catch (err) {
    if (err.status === 401) { signedOut(); return; }
    replace(els.tokens, h("h2", { id: "tokens-h" }, "API tokens"), h("p", { class: "error" }, err.message));
    return;
  }
  const personal = tokens.filter((t) => t.kind !== "session");
  const sessions = tokens.filter((t) => t.kind === "session");
  const revoke = (t, what) => confirmButton("Revoke", `Revoke ${what}?`, async () => {
    try {
      await account.revoke(t.id);
      toast(`${what[0].toUpperCase()}${what.slice(1)} revoked.`);
      if (t.id === me.token_id) { forgetSession(); location.href = "/web/sign-in"; return; }
    } catch (err) { toast(`Could not revoke it: ${err.message}`, true); }
    loadTokens();
  }, { id: `revoke-${t.id}` });
  replace(els.tokens, h("h2", { id: "tokens-h" }, "API tokens"),
    h("p", { class: "muted small" }, "Personal tokens let a program (a bot, a script) act as you, with the scopes you " +
      "give it. A token is shown once, when it is made."),
    personal.length ? h("div", { class: "scroll" }, h("table", { class: "grid tokens", id: "token-list" },
      h("thead", {}, h("tr", {}, ["Label", "Scopes", "Created", "Last used", "Expires", ""].map((c) =>
        h("th", { scope: "col" }, c)))),
      h("tbody", {}, personal.map((t) => h("tr", { dataset: { token: t.id } },
        h("th", { scope: "row" }, t.label), h("td", { "data-label": "Scopes" }, t.scopes.join(", ")),
        h("td", { "data-label": "Created" }, when(t.created_at)), h("td", { "data-label": "Last used" }, when(t.last_used_at)),
        h("td", { "data-label": "Expires" }, t.expires_at ? when(t.expires_at) : "never"),
        h("td", { class: "row-actions" }, revoke(t, `token “${t.label}”`)))))))
      : h("p", { class: "muted", id: "no-tokens" }, "No personal tokens."),
    els.created, tokenForm());
  replace(els.sessions, h("h2", { id: "sessions-h" }, "Signed-in sessions"),
    h("ul", { class: "games sessions" }, sessions.map((t) => h("li", { dataset: { token: t.id } },
      h("div", {}, h("strong", {}, t.label || "Session"), t.current || t.id === me.token_id ? h("span", { class: "badge" }, "this browser") : null),
      h("div", { class: "small muted" }, "Signed in ", when(t.created_at), " · last used ", when(t.last_used_at),
        " · ends ", when(t.expires_at)),
      h("div", { class: "actions" }, revoke(t, t.id === me.token_id ? "this session (sign out)" : "this session"))))),
    h("div", { class: "danger-zone" },
      h("p", { class: "small muted" }, "Sign out everywhere ends every session, this one too; personal tokens stay."),
      confirmButton("Sign out everywhere", "Every session ends, this one too.", async () => {
        try {
          await account.signOutEverywhere();
          forgetSession();
          location.href = "/web/sign-in";
        } catch (err) { toast(`Could not sign out everywhere: ${err.message}`, true); }
      }, { id: "sign-out-everywhere" })));
}

function tokenForm() {
  const label = inputField("tk-label", "Label", { field: "label", required: true, maxlength: 64, autocomplete: "off",
    placeholder: "my bot" });
  const expiry = inputField("tk-days", "Expires after (days, optional)", { type: "number", field: "expires_in_days",
    min: 1, max: 3650, step: 1, inputmode: "numeric", hint: "Empty: until you revoke it." });
  const scopes = h("fieldset", { class: "scopes", "data-field": "scopes", id: "tk-scopes", "aria-describedby": "tk-scopes-error" },
    h("legend", {}, "Scopes"),
    SCOPES.filter(([s]) => me.scopes.includes(s)).map(([s, what]) => h("div", { class: "field check" },
      h("input", { type: "checkbox", id: `tk-scope-${s}`, name: "scope", value: s, checked: s !== "account" }),
      h("label", { for: `tk-scope-${s}` }, h("strong", {}, s), ` — ${what}`))),
    h("p", { id: "tk-scopes-error", class: "field-error error", "aria-live": "polite" }));
  const form = h("form", { id: "new-token", class: "subform", "aria-labelledby": "new-token-h", novalidate: true },
    h("h3", { id: "new-token-h" }, "New token"), label.wrap, scopes, expiry.wrap, formError("new-token-error"),
    h("button", { type: "submit", class: "primary", id: "create-token" }, "Create token"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    clearErrors(form);
    const chosen = [...form.querySelectorAll("input[name=scope]:checked")].map((i) => i.value);
    if (!label.input.value.trim()) { showError(form, { message: "Give it a label.", details: { field: "label" } }); return; }
    if (!chosen.length) {
      $("#tk-scopes-error").textContent = "Choose at least one scope.";
      form.querySelector("input[name=scope]").focus();
      return;
    }
    const body = { label: label.input.value.trim(), scopes: chosen };
    if (expiry.input.value !== "") body.expires_in_days = Number(expiry.input.value);
    busy(form, async () => {
      try {
        const made = await account.createToken(body);
        showNewToken(made);
        await loadTokens();
        $("#new-token-value").focus();
      } catch (err) {
        if (err.details && err.details.field === "scopes") $("#tk-scopes-error").textContent = err.message;
        else showError(form, errorOf(err), words);
      }
    });
  });
  return form;
}

function showNewToken(made) {
  const value = h("input", { id: "new-token-value", readonly: true, value: made.token, class: "secret",
    "aria-describedby": "new-token-note", spellcheck: "false" });
  value.addEventListener("focus", () => value.select());
  replace(els.created, h("div", { class: "notice", role: "status" },
    h("p", { id: "new-token-note" }, h("strong", {}, `Your new token “${made.label}”: copy it now. `),
      "It is shown only this once (the service keeps only its hash)."),
    h("div", { class: "copy-row" }, h("label", { for: "new-token-value", class: "sr-only" }, "New token"), value,
      copyButton(() => made.token, "Copy", value)),
    h("button", { type: "button", class: "link", onclick: () => replace(els.created) }, "I have copied it: hide it")));
}

// Who may challenge the account (GET/PUT /v1/account/preferences): anyone, or nobody.
function preferencesForm() {
  const choices = [["anyone", "Anyone", "any signed-in player may invite you to a game; you accept or decline"],
    ["none", "Nobody", "challenges to you are refused (rematch offers and Play now still work)"]];
  const done = h("p", { class: "ok", role: "status", id: "preferences-done" });
  const group = h("fieldset", { class: "choices", id: "pref-challenges" }, h("legend", {}, "Who may challenge you"),
    choices.map(([value, label, what]) => h("div", { class: "field check" },
      h("input", { type: "radio", id: `pref-${value}`, name: "challenges", value, "aria-describedby": `pref-${value}-what` }),
      h("label", { for: `pref-${value}` }, h("strong", {}, label), h("span", { id: `pref-${value}-what`, class: "muted" }, ` — ${what}`)))));
  const form = h("form", { id: "preferences", class: "card", "aria-labelledby": "preferences-h", novalidate: true },
    h("h2", { id: "preferences-h" }, "Challenges"), group, formError("preferences-error"),
    h("button", { type: "submit", id: "save-preferences" }, "Save"), done);
  matching.preferences().then((prefs) => {
    const chosen = form.querySelector(`#pref-${prefs.challenges === "none" ? "none" : "anyone"}`);
    chosen.checked = true;
  }, (err) => showError(form, errorOf(err), words));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    clearErrors(form);
    done.textContent = "";
    const picked = form.querySelector("input[name=challenges]:checked");
    if (!picked) return;
    busy(form, async () => {
      try {
        const saved = await matching.setPreferences(picked.value);
        done.textContent = saved.challenges === "none" ? "Saved: nobody may challenge you." : "Saved: anyone may challenge you.";
      } catch (err) {
        showError(form, errorOf(err), words);
      }
    });
  });
  return form;
}

function passwordForm() {
  const current = inputField("pw-current", "Current password", { type: "password", field: "current_password",
    autocomplete: "current-password", required: true, maxlength: 512 });
  const next = inputField("pw-new", "New password", { type: "password", field: "new_password", autocomplete: "new-password",
    required: true, maxlength: 128, hint: "At least 8 characters, not a common password, and not containing your username." });
  const done = h("p", { class: "ok", role: "status", id: "password-done" });
  const form = h("form", { id: "password", class: "card", "aria-labelledby": "password-h", novalidate: true },
    h("h2", { id: "password-h" }, "Change password"),
    h("p", { class: "muted small" }, "Every other session is signed out; personal tokens stay."),
    current.wrap, next.wrap, formError("password-error"),
    h("button", { type: "submit", class: "primary", id: "change-password" }, "Change password"), done);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    clearErrors(form);
    done.textContent = "";
    if (!current.input.value) { showError(form, { message: "Type your current password.", details: { field: "current_password" } }); return; }
    if (!next.input.value) { showError(form, { message: "Choose a new password.", details: { field: "new_password" } }); return; }
    busy(form, async () => {
      try {
        await account.password(current.input.value, next.input.value);
        current.input.value = "";
        next.input.value = "";
        done.textContent = "Your password is changed. Every other session is signed out.";
        loadTokens();
      } catch (err) {
        if (err.code === "wrong_password") err.details = { ...err.details, field: "current_password" };
        showError(form, errorOf(err), words);
      }
    });
  });
  return form;
}

function codesForm() {
  const password = inputField("rc-password", "Password", { type: "password", field: "password",
    autocomplete: "current-password", required: true, maxlength: 512 });
  const shown = h("div", { id: "new-codes" });
  const form = h("form", { id: "new-recovery-codes", class: "card", "aria-labelledby": "codes-form-h", novalidate: true },
    h("h2", { id: "codes-form-h" }, "Recovery codes"),
    h("p", { class: "muted small" }, "New codes replace the old ones, which stop working. They are shown once."),
    password.wrap, formError("codes-error"),
    h("button", { type: "submit", id: "make-codes" }, "Make new recovery codes"), shown);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    clearErrors(form);
    if (!password.input.value) { showError(form, { message: "Type your password.", details: { field: "password" } }); return; }
    busy(form, async () => {
      try {
        const made = await account.recoveryCodes(password.input.value);
        password.input.value = "";
        replace(shown, recoveryCodes(made.recovery_codes, me.username));
        $("#download-codes").focus();
      } catch (err) {
        if (err.code === "wrong_password") err.details = { ...err.details, field: "password" };
        showError(form, errorOf(err), words);
      }
    });
  });
  return form;
}

function closeForm() {
  const password = inputField("cl-password", "Password", { type: "password", field: "password",
    autocomplete: "current-password", required: true, maxlength: 512 });
  const typed = inputField("cl-confirm", `Type your username (${me.username}) to confirm`, { field: "confirm",
    required: true, autocomplete: "off", autocapitalize: "none", spellcheck: "false" });
  const form = h("form", { id: "close-account", class: "card danger-card", "aria-labelledby": "close-h", novalidate: true },
    h("h2", { id: "close-h" }, "Close the account"),
    h("p", { class: "small" }, "Every session and token ends at once and the name is kept from anyone else for a year. " +
      "Your games keep their records and show your seat as a closed account's. This cannot be undone."),
    password.wrap, typed.wrap, formError("close-error"),
    h("button", { type: "submit", class: "danger", id: "close-button" }, "Close my account"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    clearErrors(form);
    if (!password.input.value) { showError(form, { message: "Type your password.", details: { field: "password" } }); return; }
    if (typed.input.value.trim() !== me.username) {
      showError(form, { message: `Type ${me.username} exactly, to show you mean it.`, details: { field: "confirm" } });
      return;
    }
    busy(form, async () => {
      try {
        await account.close(password.input.value);
        forgetSession();
        replace(main, h("div", { class: "card narrow" }, h("h1", { tabindex: "-1", id: "closed-h" }, "Account closed"),
          h("p", {}, `The account ${me.username} is closed and you are signed out.`),
          h("a", { class: "button primary", href: "/web/" }, "To the lobby")));
        $("#closed-h").focus();
        nav([]);
      } catch (err) {
        if (err.code === "wrong_password") err.details = { ...err.details, field: "password" };
        showError(form, errorOf(err), words);
      }
    });
  });
  return form;
}

function signedOut() {
  replace(main, h("div", { class: "card narrow" }, h("h1", {}, "Account"),
    h("p", {}, "Sign in to manage your account."),
    h("a", { class: "button primary", href: "/web/sign-in?next=%2Fweb%2Faccount" }, "Sign in")));
}

async function start() {
  me = await nav([], { always: true });
  if (!me) { signedOut(); return; }
  replace(main, h("h1", {}, "Account"),
    h("p", { class: "muted" }, "Signed in as ", h("strong", {}, me.username), " · account made ", when(me.created_at)),
    h("div", { class: "settings" },
      h("div", { class: "col" }, els.tokens, els.sessions),
      h("div", { class: "col" }, preferencesForm(), passwordForm(), codesForm(), closeForm())));
  await loadTokens();
}

start();
