// Sign in (username and password; the session goes in an HttpOnly cookie) and the recovery
// of a forgotten password with one recovery code. A locked name says for how long.
import { account, ApiError } from "./api.js";
import { h, replace, $ } from "./dom.js";
import { nav } from "./ui.js";
import { inputField, formError, clearErrors, showError, busy, minutes } from "./forms.js";
import { signedIn, nextPage, signOut } from "./session.js";

const main = $("#main");

function signInWords(err) {
  if (err.code === "bad_credentials") return "Wrong username or password.";
  if (err.code === "sign_in_locked") {
    return `Too many wrong passwords for this name: signing in to it is locked for ${minutes(err.retryAfter)}. ` +
      "A device you signed in from before is not locked out.";
  }
  if (err.code === "too_many_signins") return `Too many sign-in attempts from this address: try again in ${minutes(err.retryAfter)}.`;
  return null;
}

function recoverWords(err) {
  if (err.code === "bad_credentials") return "That username and recovery code do not match (each code works once).";
  if (err.code === "sign_in_locked") {
    return `Too many wrong attempts for this name: it is locked for ${minutes(err.retryAfter)}; try again then.`;
  }
  return signInWords(err);
}

function errorOf(err) {
  return err instanceof ApiError ? err : { message: `The service did not answer: ${err.message}`, details: {} };
}

function signInForm() {
  const username = inputField("si-username", "Username", { field: "username", autocomplete: "username",
    required: true, maxlength: 96, autocapitalize: "none", spellcheck: "false" });
  const password = inputField("si-password", "Password", { type: "password", field: "password",
    autocomplete: "current-password", required: true, maxlength: 512 });
  const el = h("form", { id: "sign-in", class: "card narrow", "aria-labelledby": "sign-in-h", novalidate: true },
    h("h1", { id: "sign-in-h" }, "Sign in"),
    username.wrap, password.wrap, formError("sign-in-error"),
    h("button", { type: "submit", class: "primary", id: "sign-in-button" }, "Sign in"),
    h("p", { class: "small" }, "No account? ", h("a", { href: `/web/sign-up${location.search}` }, "Sign up"),
      " — or play as a guest from the ", h("a", { href: "/web/" }, "lobby"), "."));
  el.addEventListener("submit", (ev) => {
    ev.preventDefault();
    clearErrors(el);
    if (!username.input.value.trim()) { showError(el, { message: "Type your username.", details: { field: "username" } }); return; }
    if (!password.input.value) { showError(el, { message: "Type your password.", details: { field: "password" } }); return; }
    busy(el, async () => {
      try {
        signedIn(await account.signIn(username.input.value.trim(), password.input.value));
        location.href = nextPage();
      } catch (err) {
        password.input.value = "";
        showError(el, errorOf(err), signInWords);
      }
    });
  });
  return el;
}

function recoverForm() {
  const username = inputField("rc-username", "Username", { field: "username", autocomplete: "username",
    required: true, maxlength: 96, autocapitalize: "none", spellcheck: "false" });
  const code = inputField("rc-code", "Recovery code", { field: "recovery_code", autocomplete: "off", required: true,
    maxlength: 64, autocapitalize: "none", spellcheck: "false", hint: "One of the 10 codes you saved when you signed up." });
  const password = inputField("rc-password", "New password", { type: "password", field: "new_password",
    autocomplete: "new-password", required: true, maxlength: 128,
    hint: "At least 8 characters, not a common password, and not containing your username." });
  const done = h("p", { id: "recover-done", class: "ok", role: "status" });
  const el = h("form", { id: "recover", novalidate: true },
    h("p", { class: "muted" }, "There is no email: a recovery code sets a new password, and every session of the " +
      "account is signed out."),
    username.wrap, code.wrap, password.wrap, formError("recover-error"),
    h("button", { type: "submit", id: "recover-button" }, "Set the new password"), done);
  el.addEventListener("submit", (ev) => {
    ev.preventDefault();
    clearErrors(el);
    done.textContent = "";
    for (const [f, name] of [[username, "username"], [code, "recovery_code"], [password, "new_password"]]) {
      if (!f.input.value.trim()) { showError(el, { message: "Fill this in.", details: { field: name } }); return; }
    }
    busy(el, async () => {
      try {
        await account.recover(username.input.value.trim(), code.input.value.trim(), password.input.value);
        $("#si-username").value = username.input.value.trim();
        code.input.value = "";
        password.input.value = "";
        done.textContent = "Your password is changed and every session is signed out. Sign in with the new password.";
        $("#si-password").focus();
      } catch (err) {
        showError(el, errorOf(err), recoverWords);
      }
    });
  });
  return h("details", { class: "card narrow", id: "forgot" }, h("summary", {}, "Forgot your password?"), el);
}

async function start() {
  const me = await nav([], { always: true });
  if (me) {
    replace(main, h("div", { class: "card narrow" }, h("h1", {}, "Sign in"),
      h("p", {}, "You are signed in as ", h("strong", {}, me.username), "."),
      h("a", { class: "button primary", href: nextPage() }, "Continue"),
      h("button", { type: "button", onclick: async () => { await signOut(); location.reload(); } }, "Sign out")));
    return;
  }
  replace(main, signInForm(), recoverForm());
  $("#si-username").focus();
}

start();
