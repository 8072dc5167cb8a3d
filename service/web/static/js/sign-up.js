// Sign up: a username and a password, the rules shown; the API's error next to the field it
// names. Then the 10 recovery codes, shown once (download, copy), the sign-in with the
// session cookie, and on to where the person was going.
import { account, ApiError } from "./api.js";
import { h, replace, $ } from "./dom.js";
import { nav, showAccount } from "./ui.js";
import { inputField, formError, clearErrors, showError, busy, minutes, recoveryCodes } from "./forms.js";
import { signedIn, nextPage, currentAccount } from "./session.js";

const main = $("#main");

function why(err) {
  if (err.code === "too_many_signups") return `Too many sign-ups from this address: try again in ${minutes(err.retryAfter)}.`;
  if (err.code === "username_taken") return "That name, or one that looks like it, is taken: choose another.";
  return null;
}

function form() {
  const username = inputField("su-username", "Username", { field: "username", autocomplete: "username",
    required: true, maxlength: 24, autocapitalize: "none", spellcheck: "false",
    hint: "3 to 24 characters: letters a–z, digits, _ or -, starting with a letter or a digit. " +
      "Names that look alike (0 and o, 1 and l…) count as the same name." });
  const password = inputField("su-password", "Password", { type: "password", field: "password",
    autocomplete: "new-password", required: true, maxlength: 128,
    hint: "At least 8 characters, not a common password, and not containing your username." });
  const el = h("form", { id: "sign-up", class: "card narrow", "aria-labelledby": "sign-up-h", novalidate: true },
    h("h1", { id: "sign-up-h" }, "Sign up"),
    h("p", { class: "muted" }, "An account keeps your name for you, plays from any device, and lists all your games " +
      "in one place. You can still play without one, as a guest."),
    username.wrap, password.wrap, formError("sign-up-error"),
    h("button", { type: "submit", class: "primary", id: "sign-up-button" }, "Create account"),
    h("p", { class: "small" }, "Have an account already? ", h("a", { href: `/web/sign-in${location.search}` }, "Sign in")));
  el.addEventListener("submit", (ev) => {
    ev.preventDefault();
    clearErrors(el);
    const name = username.input.value.trim();
    const secret = password.input.value;
    if (!name) { showError(el, { message: "Choose a username.", details: { field: "username" } }); return; }
    if (!secret) { showError(el, { message: "Choose a password.", details: { field: "password" } }); return; }
    busy(el, async () => {
      try {
        const made = await account.signUp(name, secret);
        await done(made, secret);
      } catch (err) {
        showError(el, err instanceof ApiError ? err : { message: err.message, details: {} }, why);
      }
    });
  });
  return el;
}

async function done(made, secret) {
  const username = made.account.username;
  const status = h("p", { id: "sign-in-status", class: "muted", "aria-live": "polite" }, "Signing you in…");
  const saved = h("input", { type: "checkbox", id: "codes-saved" });
  const next = nextPage();
  const go = h("a", { class: "button primary", id: "continue", href: next, "aria-disabled": "true" }, "Continue");
  const gate = () => {
    go.classList.toggle("disabled", !saved.checked);
    go.setAttribute("aria-disabled", String(!saved.checked));
  };
  go.addEventListener("click", (ev) => { if (!saved.checked) { ev.preventDefault(); saved.focus(); } });
  saved.addEventListener("change", gate);
  gate();
  replace(main, h("div", { class: "welcome" },
    h("h1", {}, `Welcome, ${username}`),
    h("p", {}, "Your account is made."),
    recoveryCodes(made.recovery_codes, username),
    h("div", { class: "card" },
      h("div", { class: "field check" }, saved, h("label", { for: "codes-saved" }, "I have saved my recovery codes")),
      status, go)));
  $("#download-codes").focus();
  try {
    const session = await account.signIn(username, secret);
    signedIn(session);
    showAccount(await currentAccount({ fresh: true }));
    status.textContent = "You are signed in.";
  } catch (err) {
    status.className = "error";
    status.textContent = `Your account is made, but signing in did not work (${err.message}): sign in once you have saved the codes.`;
    go.href = `/web/sign-in?next=${encodeURIComponent(next)}`;
  }
}

async function start() {
  const me = await nav([], { always: true });
  if (me) {
    replace(main, h("div", { class: "card narrow" }, h("h1", {}, "Sign up"),
      h("p", {}, `You are signed in as ${me.username}. Sign out first to make another account.`),
      h("a", { class: "button primary", href: "/web/my-games" }, "My games")));
    return;
  }
  replace(main, form());
  $("#su-username").focus();
}

start();
