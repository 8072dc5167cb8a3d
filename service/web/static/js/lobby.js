// The lobby: create a game (type, options with their defaults, open or bot seats), claim a
// seat, and the open, live and finished games. Signed in, a seat is taken as the account (no
// name, no seat token: the session cookie plays it); else as a guest with a typed name and
// the seat's token kept on this device. A game may have a clock (seconds a move) and, for a
// signed-in person, be rated (docs/ratings.md): every seat an account's or a bot's, one seat
// an account, a clock required.
//
// Finding a game (docs/matching.md), signed in: "Play now" a game type (a seek, the page
// listening on the account's stream until its table is found), the invitations (challenges and
// rematch offers to and from the account, live), and a seat reserved for an invited account
// shown as such ("reserved for NAME"; Accept when it is this account's).
import { api, rememberSeat, seatTokens, gameTypes } from "./api.js";
import { h, replace, $ } from "./dom.js";
import { toast, nav } from "./ui.js";
import { clockText, playerLink } from "./ratings.js";
import { optionInput, readOptions, clockAndRated as clockFields } from "./game-form.js";
import { invitationsBox, invitationOf, acceptAndGo, timeLeft } from "./invitations.js";
import { playNowCard } from "./play-now.js";
import { listenAccount } from "./account-stream.js";

const main = $("#main");
let types = [];
let me = null;           // the signed-in account, or null (a guest)

// A search bot's seat may carry its think time per move (budget.time_ms; empty: the default,
// at most the service's SEARCH_MAX_TIME_MS, which refuses more with a message naming the seat).
function seatRow(i, levels) {
  const id = `seat-${i}`;
  const select = h("select", { id, name: id, class: "seat-kind" },
    h("option", { value: "open", selected: i === 0 }, "open (a person)"),
    levels.map((l) => h("option", { value: l, selected: i !== 0 && l === "heuristic" }, `bot: ${l}`)));
  const thinkMs = h("input", { type: "number", id: `${id}-ms`, class: "seat-ms", min: 1, step: "any",
    inputmode: "numeric", placeholder: "think ms per move (default)", "aria-label": `Seat ${i + 1}: search think time per move, ms`,
    hidden: true });
  // a rated game's bots play at their level's default budget: no think time then
  select.addEventListener("change", () => { thinkMs.hidden = select.value !== "search" || ratedChosen(); });
  return h("div", { class: "field" }, h("label", { for: id }, `Seat ${i + 1}`), select, thinkMs);
}

function seatSpec(select) {
  if (select.value === "open") return {};
  const ms = select.parentElement.querySelector(".seat-ms");
  return select.value === "search" && ms && ms.value !== "" && !ratedChosen()
    ? { bot: "search", budget: { time_ms: Number(ms.value) } } : { bot: select.value };
}

const ratedChosen = () => Boolean($("#new-rated") && $("#new-rated").checked);

// The clock (a preset: seconds a move, "no clock" by default) and, signed in, "Rated".
function clockAndRated() {
  if (!me) {
    return [clockFields({ clock: "new-clock", none: "no-clock" }).nodes, h("p", { class: "hint" },
      h("a", { href: "/web/sign-in?next=%2Fweb%2F" }, "Sign in"), " to play rated games.")];
  }
  return clockFields({ clock: "new-clock", none: "no-clock", rated: "new-rated" }, {
    ratedHint: "Every seat an account or a bot; one seat each. Needs a clock. Bots play at their level's default think time.",
    // a rated game's bots play at their level's default budget: no think time then
    onRated: () => document.querySelectorAll(".seat-kind").forEach((sel) => sel.dispatchEvent(new Event("change"))),
  }).nodes;
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
    me ? h("div", { class: "field check" },
      h("input", { type: "checkbox", id: "take-seat", name: "take_seat", checked: true }),
      h("label", { for: "take-seat" }, "Take the first open seat as ", h("strong", {}, me.username)))
      : h("div", { class: "field" }, h("label", { for: "your-name" }, "Your name"),
        h("input", { id: "your-name", name: "name", autocomplete: "nickname", maxlength: 40,
          value: localStorage.getItem("speculation.name") || "" })),
    clockAndRated(),
    h("details", {}, h("summary", {}, "Options (defaults shown)"), options),
    h("details", { open: true }, h("summary", {}, "Seats"), seats),
    h("p", { class: "hint" }, me ? "Your seat is your account's: play it from any device where you are signed in."
      : ["With your name given, you take the first open seat as a guest. ",
        h("a", { href: "/web/sign-in" }, "Sign in"), " to play as your account."]),
    h("button", { type: "submit", class: "primary", id: "create-button" }, "Create game"));

  function refresh(keepPlayers) {
    const type = types.find((t) => t.name === typeSelect.value);
    players.min = type.min_players; players.max = type.max_players;
    if (!keepPlayers) players.value = Math.min(Math.max(4, type.min_players), type.max_players);
    replace(options, h("legend", {}, "Options"),
      Object.keys(type.options).length ? Object.entries(type.options).map(([n, s]) => optionInput(n, s))
        : h("p", {}, "This game has no options."));
    const n = Math.min(Math.max(Number(players.value) || type.min_players, type.min_players), type.max_players);
    // the seats already chosen stay as they are when only the number of players changes
    const before = keepPlayers ? [...seats.querySelectorAll(".seat-kind")].map((s) => s.value) : [];
    const leaveLevel = (seats.querySelector("#new-leave-level") || {}).value || "heuristic";
    replace(seats, h("legend", {}, "Seats"), Array.from({ length: n }, (_, i) => seatRow(i, type.bot_levels)),
      h("div", { class: "field" }, h("label", { for: "new-leave-level" }, "A person who leaves is played by"),
        h("select", { id: "new-leave-level", name: "leave_level" }, type.bot_levels.map((l) =>
          h("option", { value: l, selected: l === leaveLevel }, `bot: ${l}`)))));
    seats.querySelectorAll(".seat-kind").forEach((select, i) => {
      if (i < before.length && [...select.options].some((o) => o.value === before[i])) {
        select.value = before[i];
        select.dispatchEvent(new Event("change"));
      }
    });
  }
  typeSelect.addEventListener("change", () => refresh(false));
  players.addEventListener("change", () => refresh(true));
  refresh(false);

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const type = types.find((t) => t.name === typeSelect.value);
    const opts = readOptions(options, type);
    const seatSpecs = [...form.querySelectorAll(".seat-kind")].map(seatSpec);
    const name = me ? "" : form.querySelector("#your-name").value.trim();
    const body = { type: type.name, options: opts, seats: seatSpecs };
    const clock = form.querySelector("#new-clock").value;
    if (clock !== "") body.turn_timeout = Number(clock);
    if (ratedChosen()) body.rated = true;
    const leaveLevel = form.querySelector("#new-leave-level").value;
    if (leaveLevel !== "heuristic") body.leave_level = leaveLevel;   // heuristic: the service's default
    try {
      const game = await api.create(body);
      const open = game.seats.findIndex((s) => s.kind === "open");
      if (me && open >= 0 && form.querySelector("#take-seat").checked) {
        await api.claimAsAccount(game.game_id, open);
        location.href = `/web/games/${game.game_id}?seat=${open}`;
      } else if (name && open >= 0) {
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
  if (me) {
    try {
      await api.claimAsAccount(gameId, seat);
      location.href = `/web/games/${gameId}?seat=${seat}`;
    } catch (err) {
      toast(`Could not take seat ${seat + 1}: ${err.message}`, true);
      loadLists();
    }
    return;
  }
  const name = ($("#your-name") && $("#your-name").value.trim()) || "";
  if (!name) { toast("Type your name first (in New game).", true); $("#your-name").focus(); return; }
  try {
    localStorage.setItem("speculation.name", name);
    const claimed = await api.claim(gameId, seat, name);
    rememberSeat(gameId, seat, claimed.token);
    location.href = `/web/games/${gameId}?seat=${seat}`;
  } catch (err) {
    toast(`Could not take seat ${seat + 1}: ${err.message}`, true);
    loadLists();
  }
}

// A player's name as listed: a guest's marked "(guest)" (a typed name, not an account's),
// a closed account's marked, the signed-in account's "(you)".
function marksOf(s) {
  const marks = [s.guest ? "guest" : null, s.closed ? "closed account" : null,
    me && s.account && s.account === me.id ? "you" : null].filter(Boolean);
  return marks.length ? ` (${marks.join(", ")})` : "";
}

function playerName(s) {
  return `${s.name}${marksOf(s)}`;
}

// The seats, an account's name linking to its player's page (in a rated game a bot's level
// too: the account it is rated as).
function seatsLine(game) {
  const bot = (s) => (isRated(game) ? ["bot (", playerLink(s.level), ")"]
    : `bot (${s.level}${s.budget && s.budget.time_ms ? `, ${s.budget.time_ms} ms` : ""})`);
  return game.seats.map((s, i) => [i ? ", " : "",
    s.kind === "player" && s.account ? [playerLink(s.name), marksOf(s)]
      : s.kind === "player" ? playerName(s) : s.kind === "bot" ? bot(s)
        : s.reserved ? h("span", { class: "reserved" }, `seat ${i + 1} reserved for `, s.invited ? playerLink(s.invited) : "an invited player",
          me && s.reserved === me.id ? " (you)" : "")
          : `seat ${i + 1} open`]);
}

// A challenge's or a rematch's line: who asked, when it expires.
function invitationLine(game) {
  const inv = game.status === "open" ? invitationOf(game, me) : null;
  if (!inv) return null;
  return h("div", { class: "small invite-line" }, h("span", { class: `badge kind-${inv.kind}` }, inv.kind),
    " ", inv.iAsked ? "yours" : [inv.kind === "rematch" ? "offered by " : "from ", playerLink(inv.askerName)],
    ` · expires ${timeLeft(inv.expiresAt)}`);
}

const isRated = (game) => Boolean(game.platform_options && game.platform_options.rated);

function gameRow(game) {
  const accountSeats = me ? game.seats.map((s, i) => (s.account && s.account === me.id ? String(i) : null)).filter((i) => i !== null) : [];
  const mine = [...accountSeats, ...Object.keys(seatTokens(game.game_id))];
  const links = [];
  if (game.status === "open" && isRated(game) && !me) {
    // a rated game's seats are an account's: a guest is asked to sign in
    links.push(h("a", { class: "button", href: "/web/sign-in?next=%2Fweb%2F" }, "Sign in to take a seat"));
  } else if (game.status === "open" && !(isRated(game) && accountSeats.length)) {   // rated: one seat an account
    game.seats.forEach((s, i) => {
      // a seat reserved for an invited account: only that account takes it (accepting)
      if (s.kind === "open" && !s.reserved) {
        links.push(h("button", { type: "button", onclick: () => claim(game.game_id, i) }, `Take seat ${i + 1}`));
      }
    });
  }
  if (game.status === "open" && me && game.seats.some((s) => s.kind === "open" && s.reserved === me.id)) {
    links.push(h("button", { type: "button", class: "primary accept", onclick: async (ev) => {
      ev.currentTarget.disabled = true;
      try { await acceptAndGo(game.game_id, me); } catch (err) {
        toast(`Could not accept: ${err.message}`, true);
        loadLists();
      }
    } }, "Accept"));
  }
  if (mine.length && (game.status === "open" || game.status === "active")) {
    links.push(h("a", { class: "button primary", href: `/web/games/${game.game_id}?seat=${mine[0]}` }, "Play"));
  }
  if (game.status === "active") links.push(h("a", { class: "button", href: `/web/games/${game.game_id}` }, "Watch"));
  if (["ended", "scored", "abandoned"].includes(game.status)) {
    links.push(h("a", { class: "button", href: `/web/games/${game.game_id}` }, "Table"));
  }
  links.push(h("a", { class: "button", href: `/web/games/${game.game_id}/replay` }, "Replay"));
  const result = game.result ? ` · winner: ${game.result.winners.map((w) =>
    (game.seats[w].name ? playerName(game.seats[w]) : `bot ${w}`)).join(", ")}` : "";
  const clock = clockText((game.platform_options || {}).turn_timeout);
  const moved = game.status === "active" && game.moved_at ? ` · moved ${agoText(game.moved_at)}` : "";
  const abandoned = game.status === "abandoned" ? " · abandoned" : "";
  return h("li", { class: isRated(game) ? "game rated-game" : "game", dataset: { game: game.game_id } },
    h("div", {}, h("strong", {}, titleOf(game.type)),
      isRated(game) ? h("span", { class: "badge rated" }, "rated") : null,
      h("span", { class: "muted" }, ` · ${game.game_id} · v${game.version}${clock ? ` · ${clock}` : ""}${moved}${abandoned}${result}`)),
    h("div", { class: "muted small seats-line" }, seatsLine(game)),
    invitationLine(game),
    h("div", { class: "actions" }, links));
}

// How long ago a time (ms since the epoch) was, in words: "just now", "5 min ago", "2 h ago".
function agoText(ms) {
  const secs = Math.max(0, (Date.now() - ms) / 1000);
  if (secs < 60) return "just now";
  if (secs < 3600) return `${Math.floor(secs / 60)} min ago`;
  if (secs < 86400) return `${Math.floor(secs / 3600)} h ago`;
  return `${Math.floor(secs / 86400)} d ago`;
}

function titleOf(name) {
  const type = types.find((t) => t.name === name);
  return type ? type.title : name;
}

// One list of games: `query` the lobby's filter (a status; `live`: the active games that moved
// lately), `hint` a line under the title.
async function list(query, title, id, hint = null, perPage = 20) {
  const box = h("section", { class: "card", id, "aria-labelledby": `${id}-h` }, h("h2", { id: `${id}-h` }, title),
    hint ? h("p", { class: "hint" }, hint) : null);
  try {
    const page = await api.games({ ...query, per_page: perPage });
    box.append(page.games.length ? h("ul", { class: "games" }, page.games.map(gameRow))
      : h("p", { class: "muted" }, "None right now."));
    if (page.total > page.games.length) box.append(h("p", { class: "muted small" }, `${page.games.length} of ${page.total} shown.`));
  } catch (err) {
    box.append(h("p", { class: "error" }, err.message));
  }
  return box;
}

async function loadLists() {
  const lists = await Promise.all([list({ status: "open" }, "Open games: take a seat", "open-games"),
    list({ live: true }, "Live games", "live-games", "Games that moved recently, latest move first."),
    list({ status: "scored" }, "Finished games", "finished-games"),
    list({ status: "abandoned" }, "Abandoned games", "abandoned-games",
      "Games without a clock that nobody moved for a long time while a person was to act: over, unscored, unrated.", 5)]);
  replace($("#lists"), lists);
}

async function start() {
  me = await nav([]);
  try {
    types = await gameTypes();           // in the lobby's order, as the service declares them
  } catch (err) {
    replace(main, h("p", { class: "error" }, `The service did not answer: ${err.message}`));
    return;
  }
  const invitations = me ? invitationsBox(me, { titleOf }) : null;
  replace(main, h("div", { class: "page-head" }, h("h1", {}, "Lobby"),
    h("a", { class: "button", href: "/web/leaderboard", id: "lobby-leaderboard" }, "Leaderboard"),
    h("a", { class: "button", href: "/web/rules/", id: "lobby-rules" }, "Rules of the games")),
    invitations ? invitations.el : null,
    h("div", { class: "lobby" }, h("div", { class: "lobby-side" }, playNowCard(me, types), createForm()),
      h("div", { id: "lists" })));
  if (invitations) {
    // the account's stream: invitations live, and the seeks of "Play now" live with it
    listenAccount((event) => {
      invitations.onEvent(event);
      if (event.type.startsWith("invitation")) loadLists();
    });
    invitations.load();
    invitations.keepFresh();
  }
  await loadLists();
  setInterval(loadLists, 10000);
}

start();
