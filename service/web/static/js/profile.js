// A player's page, /web/players/NAME (also /web/profile?name=NAME): the username and when it
// joined, its rating per game type (GET /v1/accounts/NAME), a chart a type of its rating after
// each rated game (GET /v1/accounts/NAME/ratings/TYPE) with the same numbers in a table, and
// its latest games linking to their tables and replays. Public: no credentials are sent, but
// for a signed-in visitor (not this player) a "Challenge" form (challenge.js).
import { ratings, gameTypes } from "./api.js";
import { h, replace, $, plural } from "./dom.js";
import { nav, when } from "./ui.js";
import { ratingTitle, ordinalText, spread } from "./ratings.js";
import { ratingSvg, legend, historyTable } from "./chart.js";
import { challengeCard, challengeSignIn } from "./challenge.js";

const main = $("#main");
const fromPath = location.pathname.match(/^\/web\/players\/([^/]+)\/?$/);
const username = fromPath ? decodeURIComponent(fromPath[1]) : new URLSearchParams(location.search).get("name") || "";
let types = [];
const charts = [];           // [{box, history, type}] drawn again when the width changes

const titleOf = (name) => (types.find((t) => t.name === name) || { title: name }).title;
const gameHref = (id) => `/web/games/${encodeURIComponent(id)}/replay`;
const date = (ms) => new Date(ms).toLocaleDateString(undefined, { year: "numeric", month: "long", day: "numeric" });

function ratingCard(type, r) {
  return h("div", { class: "rating-card", dataset: { type } },
    h("p", { class: "small muted" }, "Rating"),
    h("p", { class: "big-number", title: ratingTitle(r) }, ordinalText(r),
      r.provisional ? h("span", { class: "provisional-mark", "aria-hidden": "true" }, "?") : null),
    h("p", { class: "small" }, spread(r)),
    h("p", { class: "small" }, `${plural(r.games, "rated game")} · ${plural(r.wins, "win")}`,
      r.provisional ? h("span", { class: "badge provisional-badge" }, "provisional") : null),
    h("a", { class: "small", href: `/web/leaderboard?type=${encodeURIComponent(type)}` }, "Leaderboard"));
}

function drawChart(item) {
  const width = item.box.clientWidth || 320;
  if (item.width === width) return;
  item.width = width;
  replace(item.box, ratingSvg(item.history, { id: `chart-${item.type}`, title: titleOf(item.type), username, width }));
}

// A game type's section: its rating card and, beside it (below on a phone), the chart of its
// rating after each rated game with the same numbers in a table.
async function typeSection(type, r) {
  const id = `history-${type}`;
  const box = h("div", { class: "chart-box" });
  const side = h("div", { class: "chart-col" }, h("h3", { class: "sr-only" }, `Rating history: ${titleOf(type)}`));
  const section = h("section", { class: "card rating-history", id, "aria-labelledby": `${id}-h`, dataset: { type } },
    h("h2", { id: `${id}-h` }, titleOf(type)), h("div", { class: "type-grid" }, ratingCard(type, r), side));
  try {
    const { history } = await ratings.history(username, type);
    if (!history.length) {
      side.append(h("p", { class: "muted" }, "No rated game kept for this type."));
      return section;
    }
    side.append(box, legend(), historyTable(history, { id: `${id}-table`, title: titleOf(type), gameHref }));
    charts.push({ box, history, type, width: null });
  } catch (err) {
    side.append(h("p", { class: "error" }, `Could not read the rating history: ${err.message}`));
  }
  return section;
}

function gameRow(g) {
  const finished = g.status === "ended" || g.status === "scored";
  const table = `/web/games/${encodeURIComponent(g.game_id)}`;
  return h("li", { class: "game", dataset: { game: g.game_id } },
    h("div", { class: "game-head" }, h("strong", {}, titleOf(g.type)),
      g.rated ? h("span", { class: "badge rated" }, "rated") : null,
      h("span", { class: `badge status-${g.status}` }, finished ? "Finished" : g.status === "active" ? "In play" : "Waiting for players")),
    h("div", { class: "small muted" }, "Last move ", when(g.last_move_at), ` · game ${g.game_id}`),
    h("div", { class: "actions" },
      h("a", { class: "button", href: table }, finished ? "Table" : g.status === "active" ? "Watch" : "Table"),
      h("a", { class: "button", href: `${table}/replay` }, "Replay")));
}

async function start() {
  const me = await nav([]);
  if (!username) {
    replace(main, h("div", { class: "card narrow" }, h("h1", {}, "Player"),
      h("p", {}, "Which player? Pick one on the ", h("a", { href: "/web/leaderboard" }, "leaderboard"), ".")));
    return;
  }
  document.title = `${username} · Speculation games`;
  let profile;
  try {
    [profile, types] = await Promise.all([ratings.profile(username), gameTypes().catch(() => [])]);
  } catch (err) {
    replace(main, h("div", { class: "card narrow" }, h("h1", {}, username),
      h("p", { class: err.status === 404 ? "" : "error", id: "no-player" },
        err.status === 404 ? "No player has this name." : `The service did not answer: ${err.message}`),
      h("a", { href: "/web/leaderboard" }, "The leaderboard")));
    return;
  }
  document.body.dataset.player = profile.username;
  const rated = Object.entries(profile.ratings || {})
    .sort(([a], [b]) => types.findIndex((t) => t.name === a) - types.findIndex((t) => t.name === b));
  const you = me && me.id === profile.id;
  // a person's page, not yours: "Challenge NAME" opens the challenge form below (signed out: where to sign in)
  const person = !profile.bot && !profile.closed && !you && types.length;
  const challenge = !person ? null : me ? challengeCard(me, profile, types) : challengeSignIn(profile.username);
  let challengeToggle = null;
  if (challenge && me) {
    challenge.hidden = true;
    challengeToggle = h("p", { class: "profile-actions" }, h("button", { type: "button", class: "primary", id: "challenge-open",
      "aria-expanded": "false", "aria-controls": "challenge", onclick: (ev) => {
        const open = challenge.hidden;
        challenge.hidden = !open;
        ev.currentTarget.setAttribute("aria-expanded", String(open));
        if (open) challenge.querySelector("select, input").focus();
      } }, `Challenge ${profile.username}`));
  }
  const head = h("section", { class: "card profile-head" },
    h("h1", { id: "player-name" }, profile.username,
      profile.bot ? h("span", { class: "badge bot" }, "bot") : null,
      profile.closed ? h("span", { class: "badge" }, "closed account") : null,
      you ? h("span", { class: "badge you" }, "you") : null),
    h("p", { class: "muted" }, profile.bot
      ? ["The account the ", h("strong", {}, profile.username), " bot level is rated as: every seat of that level in a rated game. ",
        "Rated since ", h("time", { datetime: new Date(profile.created_at).toISOString() }, date(profile.created_at)), "."]
      : ["Joined ", h("time", { id: "joined", datetime: new Date(profile.created_at).toISOString() }, date(profile.created_at)), "."]),
    challengeToggle,
    rated.length ? h("p", { class: "hint" }, "A rating is μ − 3σ: the skill estimate μ less three times its uncertainty σ, " +
      "so it rises as games confirm the skill. \u201c?\u201d: provisional, fewer than 10 rated games of that type.") : null);
  const none = rated.length ? null : h("section", { class: "card", id: "ratings", "aria-labelledby": "ratings-h" },
    h("h2", { id: "ratings-h" }, "Ratings"),
    h("p", { class: "muted", id: "no-ratings" }, "No rated games yet: a rating comes with the first rated game of a type."));
  const recent = h("section", { class: "card", id: "recent-games", "aria-labelledby": "recent-h" },
    h("h2", { id: "recent-h" }, "Recent games"),
    profile.recent_games.length ? h("ul", { class: "games" }, profile.recent_games.map(gameRow))
      : h("p", { class: "muted" }, profile.bot ? "A bot's games are in its rating history above (each game number links to its replay)."
        : "No games yet."));
  const sections = await Promise.all(rated.map(([type, r]) => typeSection(type, r)));
  replace(main, head, challenge, none, sections, recent);
  charts.forEach(drawChart);
  document.body.dataset.charts = String(charts.length);
  let timer = null;
  window.addEventListener("resize", () => {
    clearTimeout(timer);
    timer = setTimeout(() => charts.forEach(drawChart), 150);
  });
}

start();
