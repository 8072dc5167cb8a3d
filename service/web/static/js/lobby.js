// The lobby: create a game (type, options with their defaults, open or bot seats), claim a
// seat, and the open, live and finished games.
import { api, rememberSeat, seatTokens, gameTypes } from "./api.js";
import { h, replace, $ } from "./dom.js";
import { toast, nav } from "./ui.js";

const main = $("#main");
let types = [];

function optionInput(name, spec) {
  const id = `opt-${name}`;
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

// A search bot's seat may carry its think time per move (budget.time_ms; empty: the default,
// at most the service's SEARCH_MAX_TIME_MS, which refuses more with a message naming the seat).
function seatRow(i, levels) {
  const id = `seat-${i}`;
  const select = h("select", { id, name: id, class: "seat-kind" },
    h("option", { value: "open", selected: i === 0 }, "open (a person)"),
    levels.map((l) => h("option", { value: l, selected: i !== 0 && l === "heuristic" }, `bot: ${l}`)));
  const thinkMs = h("input", { type: "number", id: `${id}-ms`, class: "seat-ms", min: 1, step: "any",
    inputmode: "numeric", placeholder: "think ms per move (default)", "aria-label": `Seat ${i}: search think time per move, ms`,
    hidden: true });
  select.addEventListener("change", () => { thinkMs.hidden = select.value !== "search"; });
  return h("div", { class: "field" }, h("label", { for: id }, `Seat ${i}`), select, thinkMs);
}

function seatSpec(select) {
  if (select.value === "open") return {};
  const ms = select.parentElement.querySelector(".seat-ms");
  return select.value === "search" && ms && ms.value !== "" ? { bot: "search", budget: { time_ms: Number(ms.value) } }
    : { bot: select.value };
}

function createForm() {
  const typeSelect = h("select", { id: "new-type", name: "type" },
    types.map((t) => h("option", { value: t.name }, t.title)));
  const players = h("input", { id: "new-players", type: "number", name: "players", inputmode: "numeric" });
  const options = h("fieldset", { class: "options" });
  const seats = h("fieldset", { class: "seats" });
  const form = h("form", { id: "create", class: "card" },
    h("h2", {}, "New game"),
    h("div", { class: "field" }, h("label", { for: "new-type" }, "Game"), typeSelect),
    h("div", { class: "field" }, h("label", { for: "new-players" }, "Players"), players),
    h("div", { class: "field" }, h("label", { for: "your-name" }, "Your name"),
      h("input", { id: "your-name", name: "name", autocomplete: "nickname", maxlength: 40,
        value: localStorage.getItem("speculation.name") || "" })),
    h("details", {}, h("summary", {}, "Options (defaults shown)"), options),
    h("details", { open: true }, h("summary", {}, "Seats"), seats),
    h("p", { class: "hint" }, "With your name given, you take the first open seat."),
    h("button", { type: "submit", class: "primary", id: "create-button" }, "Create game"));

  function refresh(keepPlayers) {
    const type = types.find((t) => t.name === typeSelect.value);
    players.min = type.min_players; players.max = type.max_players;
    if (!keepPlayers) players.value = Math.min(Math.max(4, type.min_players), type.max_players);
    replace(options, h("legend", {}, "Options"),
      Object.keys(type.options).length ? Object.entries(type.options).map(([n, s]) => optionInput(n, s))
        : h("p", {}, "This game has no options."));
    const n = Math.min(Math.max(Number(players.value) || type.min_players, type.min_players), type.max_players);
    replace(seats, h("legend", {}, "Seats"), Array.from({ length: n }, (_, i) => seatRow(i, type.bot_levels)));
  }
  typeSelect.addEventListener("change", () => refresh(false));
  players.addEventListener("change", () => refresh(true));
  refresh(false);

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const type = types.find((t) => t.name === typeSelect.value);
    const opts = {};
    for (const [name, spec] of Object.entries(type.options)) {
      const input = form.querySelector(`[name="${name}"]`);
      if (spec.type === "boolean") opts[name] = input.checked;
      else if (spec.type === "integer") { if (input.value !== "") opts[name] = Number(input.value); }
      else opts[name] = input.value;
    }
    const seatSpecs = [...form.querySelectorAll(".seat-kind")].map(seatSpec);
    const name = form.querySelector("#your-name").value.trim();
    try {
      const game = await api.create({ type: type.name, options: opts, seats: seatSpecs });
      const open = game.seats.findIndex((s) => s.kind === "open");
      if (name && open >= 0) {
        localStorage.setItem("speculation.name", name);
        const claimed = await api.claim(game.game_id, open, name);
        rememberSeat(game.game_id, open, claimed.token);
        location.href = `/web/games/${game.game_id}?seat=${open}`;
      } else {
        location.href = `/web/games/${game.game_id}`;
      }
    } catch (err) {
      toast(`Could not create the game: ${err.message}`, true);
    }
  });
  return form;
}

async function claim(gameId, seat) {
  const name = ($("#your-name") && $("#your-name").value.trim()) || "";
  if (!name) { toast("Type your name first (in New game).", true); $("#your-name").focus(); return; }
  try {
    localStorage.setItem("speculation.name", name);
    const claimed = await api.claim(gameId, seat, name);
    rememberSeat(gameId, seat, claimed.token);
    location.href = `/web/games/${gameId}?seat=${seat}`;
  } catch (err) {
    toast(`Could not take seat ${seat}: ${err.message}`, true);
    loadLists();
  }
}

function seatsText(game) {
  const bot = (s) => `bot (${s.level}${s.budget && s.budget.time_ms ? `, ${s.budget.time_ms} ms` : ""})`;
  return game.seats.map((s, i) => (s.kind === "player" ? s.name : s.kind === "bot" ? bot(s) : `seat ${i} open`)).join(", ");
}

function gameRow(game) {
  const mine = Object.keys(seatTokens(game.game_id));
  const links = [];
  if (game.status === "open") {
    game.seats.forEach((s, i) => {
      if (s.kind === "open") links.push(h("button", { type: "button", onclick: () => claim(game.game_id, i) }, `Take seat ${i}`));
    });
  }
  if (mine.length && (game.status === "open" || game.status === "active")) {
    links.push(h("a", { class: "button primary", href: `/web/games/${game.game_id}?seat=${mine[0]}` }, "Play"));
  }
  if (game.status === "active") links.push(h("a", { class: "button", href: `/web/games/${game.game_id}` }, "Watch"));
  if (game.status === "ended" || game.status === "scored") {
    links.push(h("a", { class: "button", href: `/web/games/${game.game_id}` }, "Table"));
  }
  links.push(h("a", { class: "button", href: `/web/games/${game.game_id}/replay` }, "Replay"));
  const result = game.result ? ` · winner: ${game.result.winners.map((w) => (game.seats[w].name || `bot ${w}`)).join(", ")}` : "";
  return h("li", { class: "game" },
    h("div", {}, h("strong", {}, titleOf(game.type)),
      h("span", { class: "muted" }, ` · ${game.game_id} · v${game.version}${result}`)),
    h("div", { class: "muted small" }, seatsText(game)),
    h("div", { class: "actions" }, links));
}

function titleOf(name) {
  const type = types.find((t) => t.name === name);
  return type ? type.title : name;
}

async function list(status, title, id) {
  const box = h("section", { class: "card", id, "aria-labelledby": `${id}-h` }, h("h2", { id: `${id}-h` }, title));
  try {
    const page = await api.games({ status, per_page: 20 });
    box.append(page.games.length ? h("ul", { class: "games" }, page.games.map(gameRow))
      : h("p", { class: "muted" }, "None right now."));
    if (page.total > page.games.length) box.append(h("p", { class: "muted small" }, `${page.games.length} of ${page.total} shown.`));
  } catch (err) {
    box.append(h("p", { class: "error" }, err.message));
  }
  return box;
}

async function loadLists() {
  const lists = await Promise.all([list("open", "Open games: take a seat", "open-games"),
    list("active", "Live games", "live-games"), list("scored", "Finished games", "finished-games")]);
  replace($("#lists"), lists);
}

async function start() {
  nav([]);
  try {
    types = await gameTypes();           // in the lobby's order, as the service declares them
  } catch (err) {
    replace(main, h("p", { class: "error" }, `The service did not answer: ${err.message}`));
    return;
  }
  replace(main, h("h1", {}, "Lobby"), h("div", { class: "lobby" }, createForm(), h("div", { id: "lists" })));
  await loadLists();
  setInterval(loadLists, 10000);
}

start();
