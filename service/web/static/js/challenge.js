// "Challenge NAME" on a player's page (docs/matching.md): a game of a type for 2 or more
// players, the challenger's seat and the invited account's, the other seats open to anyone or
// bots, rated (with its clock) or not, and how long the invitation waits. POST /v1/challenges
// takes the challenger's seat at once; then the page goes to the table, where it waits for the
// answer.
import { matching } from "./api.js";
import { h, replace } from "./dom.js";
import { formError, showError, clearErrors, busy } from "./forms.js";
import { optionInput, readOptions, clockAndRated, EXPIRIES, shortTitle } from "./game-form.js";

const LAST_TYPE = "speculation.challenge-type";

export function challengeCard(me, profile, types) {
  const name = profile.username;
  const remembered = (() => { try { return localStorage.getItem(LAST_TYPE); } catch { return null; } })();
  const typeSelect = h("select", { id: "ch-type", name: "type" },
    types.map((t) => h("option", { value: t.name, selected: t.name === remembered }, t.title)));
  const players = h("input", { id: "ch-players", type: "number", name: "players", inputmode: "numeric", "aria-describedby": "ch-players-hint" });
  const playersHint = h("p", { class: "hint", id: "ch-players-hint" });
  const order = h("select", { id: "ch-order", name: "order" },
    h("option", { value: "me" }, "You"), h("option", { value: "them" }, name));
  const others = h("fieldset", { class: "seats", id: "ch-seats" });
  const options = h("fieldset", { class: "options" });
  const timing = clockAndRated({ clock: "ch-clock", none: "ch-no-clock", rated: "ch-rated" },
    { ratedHint: `${name}'s rating changes too. Every seat an account or a bot. Needs a clock.` });
  const expiry = h("select", { id: "ch-expires", name: "expires_in", "aria-describedby": "ch-expires-hint" },
    EXPIRIES.map(([secs, text]) => h("option", { value: String(secs), selected: secs === 600 }, text)));
  const done = h("p", { class: "ok", role: "status", id: "challenge-done" });
  const form = h("form", { id: "challenge", class: "card challenge", "aria-labelledby": "challenge-h", novalidate: true },
    h("h2", { id: "challenge-h" }, `Challenge ${name}`),
    h("p", { class: "muted small" }, `${name} is told at once and accepts or declines; the game starts when every seat is taken.`),
    h("div", { class: "challenge-grid" },
      h("div", { class: "field" }, h("label", { for: "ch-type" }, "Game"), typeSelect),
      h("div", { class: "field" }, h("label", { for: "ch-players" }, "Players"), players, playersHint),
      h("div", { class: "field" }, h("label", { for: "ch-order" }, "Who sits first"), order),
      h("div", { class: "field" }, h("label", { for: "ch-expires" }, "The invitation waits"), expiry,
        h("p", { class: "hint", id: "ch-expires-hint" }, "Then it expires: the game never starts."))),
    others,
    timing.nodes,
    h("details", {}, h("summary", {}, "Options (defaults shown)"), options),
    formError("challenge-error"),
    h("button", { type: "submit", class: "primary", id: "challenge-button" }, `Challenge ${name}`), done);

  function otherSeat(i, levels) {
    const id = `ch-seat-${i}`;
    return h("div", { class: "field" }, h("label", { for: id }, `Seat for player ${i + 1}`),
      h("select", { id, class: "other-seat", name: id },
        h("option", { value: "open" }, "open (anyone may take it)"),
        levels.map((l) => h("option", { value: l, selected: l === "heuristic" }, `bot: ${l}`))));
  }

  function refresh(keepPlayers) {
    const type = types.find((t) => t.name === typeSelect.value) || types[0];
    players.min = type.min_players;
    players.max = type.max_players;
    if (!keepPlayers || !(Number(players.value) >= type.min_players && Number(players.value) <= type.max_players)) {
      players.value = Math.max(2, type.min_players);
    }
    playersHint.textContent = `${type.min_players} to ${type.max_players}: you, ${name} and ` +
      "the others open to anyone or bots.";
    const n = Number(players.value);
    const before = [...others.querySelectorAll(".other-seat")].map((s) => s.value);
    replace(others, h("legend", {}, "The other seats"),
      n > 2 ? Array.from({ length: n - 2 }, (_, k) => otherSeat(k + 2, type.bot_levels))
        : h("p", { class: "muted small" }, `Just you and ${name}.`));
    others.querySelectorAll(".other-seat").forEach((sel, k) => {
      if (keepPlayers && k < before.length) sel.value = before[k];
    });
    replace(options, h("legend", {}, "Options"),
      Object.keys(type.options).length ? Object.entries(type.options).map(([n2, spec]) => optionInput(n2, spec, "ch-opt"))
        : h("p", {}, "This game has no options."));
  }
  typeSelect.addEventListener("change", () => refresh(false));
  players.addEventListener("change", () => refresh(true));
  refresh(false);

  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    clearErrors(form);
    done.textContent = "";
    const type = types.find((t) => t.name === typeSelect.value);
    const n = Number(players.value);
    if (!Number.isInteger(n) || n < type.min_players || n > type.max_players) {
      showError(form, { message: `${shortTitle(type)} takes ${type.min_players} to ${type.max_players} players.`, details: {} });
      players.focus();
      return;
    }
    const two = order.value === "me" ? [{ me: true }, { account: name }] : [{ account: name }, { me: true }];
    const rest = [...others.querySelectorAll(".other-seat")].map((s) => (s.value === "open" ? {} : { bot: s.value }));
    const body = { type: type.name, options: readOptions(options, type), seats: [...two, ...rest],
      rated: Boolean(timing.rated.checked), expires_in: Number(expiry.value) };
    if (timing.clock.value !== "") body.turn_timeout = Number(timing.clock.value);
    busy(form, async () => {
      try {
        const game = await matching.challenge(body);
        try { localStorage.setItem(LAST_TYPE, type.name); } catch { /* storage refused */ }
        const mine = game.seats.findIndex((s) => s.account === me.id);
        done.textContent = `Challenge sent: opening the table…`;
        location.href = `/web/games/${encodeURIComponent(game.game_id)}${mine >= 0 ? `?seat=${mine}` : ""}`;
      } catch (err) {
        showError(form, err, (e) => (e.code === "challenges_refused" ? `${name} does not take challenges.`
          : e.code === "too_many_challenges" ? `You have sent many challenges lately: try again in ${
            Math.ceil((e.retryAfter || 60) / 60)} min.`
            : e.status === 401 ? "You are signed out: sign in again." : null));
      }
    });
  });
  return form;
}

// Signed out on a player's page: where to sign in to challenge.
export function challengeSignIn(name) {
  return h("section", { class: "card challenge", id: "challenge-sign-in" },
    h("h2", {}, `Challenge ${name}`),
    h("p", {}, h("a", { href: `/web/sign-in?next=${encodeURIComponent(location.pathname)}` }, "Sign in"),
      ` to challenge ${name} to a game.`));
}
