// A game's table: what the seat (or a spectator) sees, live over the event stream, the legal
// actions as controls, every event in words.
//
// Who plays: the signed-in account when it holds a seat of this game (its session cookie,
// X-CSRF-Token on a move, the seat named when it holds several: `?seat=N` picks one, the first
// by default), else a guest's seat token kept on this device (`?seat=N` among them), else the
// spectator (`?spectator=1` always).
//
// A challenge or a rematch offer (docs/matching.md) shows who asked whom: to the invited
// account Accept / Decline, to the asker "waiting for NAME to accept" and Cancel; a seat
// reserved for someone says so; an expired one says why (declined, cancelled, expired). Once
// the game is scored an account's seat may ask a rematch, and sees the other side's offer
// (from the account's stream) with Accept / Decline.
//
// A seated person may leave the game (Leave the game, then a confirm step): a bot of the game's
// leave_level takes the seat over and plays it to the end; the page then watches as a
// spectator, and the seat shows as the bot's, "(NAME left)". Who left cannot come back to it.
import { api, account, matching, seatTokens, forgetSeat, gameIdFromPath, ApiError } from "./api.js";
import { h, replace, $ } from "./dom.js";
import { toast, nav } from "./ui.js";
import { gameLook } from "./draw/index.js";
import { actionControls } from "./controls.js";
import { playerLink, profileHref, ratingBadge, profileOf, clockText } from "./ratings.js";
import { invitationOf, expiredText, expiredWhyOf, timeLeft, listing, acceptAndGo, tableHref } from "./invitations.js";
import { listenAccount } from "./account-stream.js";
import { Countdown } from "./clock.js";
import { endScreen } from "./end-screen.js";
import { rulesLink } from "./rules-link.js";
import { EventLog } from "./event-log.js";
import { TurnAlerts } from "./alerts.js";

const gameId = gameIdFromPath();
const params = new URLSearchParams(location.search);
const tokens = seatTokens(gameId);
let accountSeats = [];   // the seats the signed-in account holds in this game
let seat = null;
let token = null;        // who the calls are made as: a seat token, {session, seat, several}, or null

let view = null;
let glossary = {};
let look = null;         // the game's title and drawer (draw/index.js)
let labels = [];
// the event log (event-log.js): every event's words in version order, a recent window loaded
// first; the latest words answer's seat labels, and as whom they were asked
const log = new EventLog(askLogWords, logChanged);
let logLabels = { labels: null, version: -1, as: undefined };
const alerts = new TurnAlerts();
let source = null;
let refreshTimer = null;
// Refreshes overlap (the stream, a move's answer, a timer): each takes a number, and one that a
// later refresh overtook draws nothing, so an older view never replaces a newer one (a finished
// table was left showing its last move's controls, without its rematch button, under load).
let refreshes = 0;
let busy = false;
let platform = {};       // the game's platform options (rated, turn_timeout, challenger, …) from its summary
let createdAt = 0;       // when the game was made (its summary)
const rated = {};        // username → its rating of this game's type (null: none), once fetched
let me = null;           // the signed-in account (null: none, or a guest's browser)
let expiredWhy = null;   // an expired game's game.expired data: {reason, by}
let abandonedWhy = null; // an abandoned game's game.abandoned data: {idle_since, to_act}
// the rematch of this game once scored: its summary (null: none yet), why it expired, the
// account's stream listened to for the other side's offer
const rematch = { game: null, why: null, watching: false, el: null, looking: false };
// leaving the game: the Leave button and its confirm step (kept across redraws), and the seat
// this page's person left (null: none), for the spectator's words after it
const leaving = { el: null, asking: false, busy: false, left: null };

const main = $("#main");
const countdown = new Countdown();   // a timed game's deadlines, by the server's clock (clock.js)
const els = {
  header: h("section", { class: "status card", id: "status", "aria-live": "polite" }),
  invite: h("section", { class: "card invite", id: "invitation", "aria-live": "polite", hidden: true }),
  board: h("section", { class: "board", id: "board", "aria-label": "The table" }),
  actions: h("section", { class: "card actions-panel", id: "actions", "aria-labelledby": "actions-h" }),
  log: h("section", { class: "card log", id: "log", "aria-labelledby": "log-h" }),
};

// People count seats from 1; the API's seats are 0-based.
function who(s) { return labels[s] || (s === null || s === undefined || s < 0 ? "nobody" : `Seat ${s + 1}`); }

const asAccount = () => token !== null && typeof token === "object";

// The seat this page plays and as whom (see the top of this file).
function choose(me, seats) {
  accountSeats = me ? seats.map((s, i) => (s.account && s.account === me.id && !s.left ? i : null)).filter((i) => i !== null) : [];
  const gone = me ? seats.findIndex((s) => s.left && s.account === me.id) : -1;
  if (gone >= 0) leaving.left = gone;
  const asked = params.has("seat") ? Number(params.get("seat")) : null;
  const account = (n) => { seat = n; token = { session: true, seat: n, several: accountSeats.length > 1 }; };
  const guest = (n) => { seat = n; token = tokens[n]; };
  if (params.has("spectator")) { seat = null; token = null; }
  else if (asked !== null && accountSeats.includes(asked)) account(asked);
  else if (asked !== null && tokens[asked]) guest(asked);
  else if (accountSeats.length) account(accountSeats[0]);
  else if (Object.keys(tokens).length) guest(Number(Object.keys(tokens)[0]));
  else { seat = null; token = null; }
}

// The seat labels, a guest's marked "(guest)": a typed name, not an account's.
async function readLabels() {
  return labelsFrom((await api.words(gameId, token)).seat_labels);
}

function labelsFrom(shown) {
  const seats = (view && view.seats) || [];
  return shown.map((label, i) => {
    const s = seats[i] || {};
    if (s.kind !== "player" || !s.guest) return label;
    const you = i === seat && label.endsWith(" (you)");
    return `${you ? label.slice(0, -6) : label} (guest)${you ? " (you)" : ""}`;
  });
}

async function fetchView() {
  if (token) {
    try { return await api.view(gameId, token); } catch (err) {
      if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
        if (err.code === "seat_left") {
          if (!asAccount()) forgetSeat(gameId, seat);
          leaving.left = seat;
          toast("You left this game: a bot plays your seat now. Watching as a spectator.", true);
        } else if (asAccount()) {
          toast(err.status === 401 ? "You are signed out: watching as a spectator." :
            `Your account does not play this seat: watching as a spectator.`, true);
          accountSeats = [];
        } else {
          forgetSeat(gameId, seat);
          toast("This device's token for that seat was refused: watching as a spectator.", true);
        }
        seat = null; token = null;
      } else throw err;
    }
  }
  const summary = await api.summary(gameId);
  return { ...summary.view, seats: summary.seats, result: summary.result || summary.view.result };
}

// The log's words for the events in (after, until], with the seat labels (one words call a batch).
async function askLogWords(after, until) {
  const asked = token;
  const answer = await api.words(gameId, asked, { after, until }).catch((err) => {
    // the seat's person left meanwhile (here, as the stream brought the leave, or elsewhere):
    // the spectator's words, never a line lost from the log
    if (err instanceof ApiError && err.code === "seat_left") return api.words(gameId, null, { after, until });
    throw err;
  });
  answer.asked = answer.viewer === null && asked !== null ? null : asked;
  return answer;
}

function logChanged(answer) {
  if (answer && answer.version >= logLabels.version) {
    logLabels = { labels: answer.seat_labels, version: answer.version, as: answer.asked };
  }
  drawLog();
}

// Events as they came (the stream, a move's answer): their data the page keeps (why a game
// expired or was abandoned), then the log reaches their versions in words.
function noteEvents(events) {
  if (!events.length) return;
  const ended = events.find((e) => e.type === "game.expired");
  if (ended) expiredWhy = ended.data || {};
  const abandoned = events.find((e) => e.type === "game.abandoned");
  if (abandoned) abandonedWhy = abandoned.data || {};
  reachLog(Math.max(...events.map((e) => e.version)));
}

let logRetry = null;
function reachLog(version) {
  return log.reach(version).catch(() => {
    // the versions not put into words stay asked for: once more shortly, and at every refresh
    clearTimeout(logRetry);
    logRetry = setTimeout(() => reachLog(version), 2000);
  });
}

// Each player's rating of this game's type, asked once a seat (its account's profile; in a
// rated game a bot's level too, the account it is rated as); the status is drawn again as
// each arrives.
function askRatings(seats) {
  (seats || []).forEach((s) => {
    const name = s.kind === "player" && s.account ? s.name : s.kind === "bot" && platform.rated ? s.level : null;
    if (!name || name in rated) return;
    rated[name] = undefined;
    profileOf(name).then((profile) => {
      rated[name] = (profile && profile.ratings && profile.ratings[view.type]) || null;
      if (view) drawStatus();
    });
  });
}

// The players: an account's name linking to its page, with its rating of this game's type.
function playersLine() {
  const seats = view.seats || [];
  const badge = (name) => (rated[name] === undefined ? null : [" ", ratingBadge(rated[name], { typeTitle: look.title })]);
  return h("p", { class: "players small", id: "players" }, h("span", { class: "muted" }, "Players: "),
    seats.map((s, i) => {
      const you = i === seat ? " (you)" : "";
      const item = s.left
        ? h("span", { class: "left-seat" }, `Bot ${i + 1} (${s.level}) for `, s.account ? playerLink(s.name) : s.name || `seat ${i + 1}`,
          ", who left", me && s.account === me.id ? " (you)" : "")
        : s.kind === "player" && s.account
        ? [playerLink(s.name), s.closed ? " (closed account)" : "", you, badge(s.name)]
        : s.kind === "bot" && platform.rated
          ? [`Bot ${i + 1} (`, playerLink(s.level), ")", badge(s.level)]
          : s.kind === "open" && s.reserved
            ? h("span", { class: "reserved" }, `Seat ${i + 1}: ${view.status === "expired" ? "was reserved" : "reserved"} for `,
              s.invited ? playerLink(s.invited) : "an invited player", me && s.reserved === me.id ? " (you)" : "")
            : who(i);
      return [i ? " · " : "", h("span", { class: "seat-player", dataset: { seat: i } }, item)];
    }));
}

function drawStatus() {
  const st = view.status;
  const toAct = view.to_act || [];
  const yours = seat !== null && toAct.includes(seat);
  const waitingFor = (view.seats || []).filter((s) => s.kind === "open" && s.reserved).map((s) => s.invited || "an invited player");
  const line = st === "open" ? (waitingFor.length ? "The game starts when every seat is taken." : "Waiting for players to take the open seats.")
    : st === "active" ? (toAct.length ? `To act: ${toAct.map(who).join(", ")}` : "The rules are moving on…")
    : st === "ended" ? "The game is over; scoring…" : st === "expired" ? "This game never started."
    : st === "abandoned" ? abandonedText() : "The game is over.";
  // every seat this device may play: the account's, then the guest seats' tokens
  const playable = [...new Set([...accountSeats.map(String), ...Object.keys(tokens)])];
  const seatPicker = st === "expired" ? null : h("div", { class: "seat-picker" },
    h("span", {}, seat === null ? "You are watching as a spectator." : `You are playing ${who(seat).replace(/ \(you\)$/, "")}.`),
    playable.filter((s) => Number(s) !== seat).map((s) =>
      h("a", { class: "button", href: `?seat=${s}` }, `Play seat ${Number(s) + 1}${labels[s] ? ` (${labels[s].replace(/ \(you\)$/, "")})` : ""}`)),
    seat !== null ? h("a", { class: "button", href: "?spectator=1" }, "Watch as spectator") : null,
    drawLeave(), seat !== null ? alerts.el : null);
  // another seat this device plays is to act: a link to it
  const waiting = playable.map(Number).filter((s) => s !== seat && toAct.includes(s));
  const clock = clockText(platform.turn_timeout);
  replace(els.header,
    h("h1", {}, look.title, platform.rated ? h("span", { class: "badge rated", id: "rated-badge",
      title: "A rated game: every seat an account or a bot, one seat each; the result changes the ratings" }, "Rated") : null,
      rulesLink(view.type)),
    h("p", { class: "muted small" }, `Game ${gameId} · version ${view.version} · ${st}${clock ? ` · clock: ${clock}` : ""}`),
    playersLine(),
    countdown.el,
    h("p", { class: yours ? "turn yours" : "turn" }, yours ? "Your move. " : "", line),
    view.result ? h("p", { class: "result", id: "result" }, resultText(view.result)) : null,
    view.status === "scored" && view.result ? endScreen(gameId, who) : null,
    waiting.length ? h("p", { class: "turn yours" }, `Your seat ${waiting[0] + 1} is to act: `,
      h("a", { href: `?seat=${waiting[0]}` }, `play seat ${waiting[0] + 1}`)) : null,
    seatPicker);
}

// A challenge or a rematch offer: who asked whom, the answer asked of this account, or why it ended.
function drawInvite() {
  const inv = invitationOf({ platform_options: platform, seats: view.seats }, me);
  if (!inv || !["open", "expired"].includes(view.status)) {
    els.invite.hidden = true;
    replace(els.invite);
    return;
  }
  const kind = inv.kind === "rematch" ? "rematch offer" : "challenge";
  const heading = h("h2", { id: "invitation-h" }, inv.kind === "rematch" ? "Rematch offer" : "Challenge");
  const previous = inv.rematchOf ? h("a", { href: `/web/games/${encodeURIComponent(inv.rematchOf)}` }, "the last game") : null;
  const expires = h("p", { class: "muted small" }, `It expires ${timeLeft(inv.expiresAt)} if not every invited player accepts.`);
  let body;
  if (view.status === "expired") {
    const again = inv.iAsked && inv.kind === "challenge" && inv.waiting.length === 1 ? inv.waiting[0] : null;
    body = [h("p", { class: "expired-reason", id: "expired-reason" },
      expiredText({ platform_options: platform, seats: view.seats }, expiredWhy, me)),
    h("p", { class: "muted small" }, "This game never starts; its log is kept."),
    h("div", { class: "actions" }, h("a", { class: "button", href: "/web/" }, "To the lobby"),
      again ? h("a", { class: "button", href: profileHref(again) }, `Challenge ${again} again`) : null)];
  } else if (inv.mySeat >= 0) {
    body = [h("p", { class: "invite-ask", id: "invite-ask" }, playerLink(inv.askerName),
      inv.kind === "rematch" ? [" offers you a rematch of ", previous, "."] : " challenges you to this game."),
    expires,
    h("div", { class: "actions" },
      h("button", { type: "button", class: "primary", id: "accept-invitation", onclick: (ev) => answer(ev, "accept") }, "Accept"),
      h("button", { type: "button", id: "decline-invitation", onclick: (ev) => answer(ev, "decline") }, "Decline"))];
  } else if (inv.iAsked) {
    body = [h("p", { class: "invite-wait", id: "invite-wait" }, "Waiting for ", inv.waiting.map((n, i) =>
      [i ? (i === inv.waiting.length - 1 ? " and " : ", ") : "", playerLink(n)]), " to accept your ", kind, "."),
    expires,
    h("div", { class: "actions" }, h("button", { type: "button", id: "cancel-invitation", onclick: (ev) => answer(ev, "cancel") },
      inv.kind === "rematch" ? "Cancel the offer" : "Cancel the challenge"))];
  } else {
    body = [h("p", { class: "invite-wait", id: "invite-wait" }, playerLink(inv.askerName), `'s ${kind}: waiting for `,
      listing(inv.waiting), " to accept."), expires];
  }
  replace(els.invite, heading, body);
  els.invite.hidden = false;
}

async function answer(ev, what) {
  ev.currentTarget.disabled = true;
  try {
    if (what === "accept") { await acceptAndGo(gameId, me); return; }
    await matching[what](gameId);
    expiredWhy = { reason: what === "decline" ? "declined" : "cancelled", by: me.id };
  } catch (err) {
    toast(`Could not ${what}: ${err.message}`, true);
  }
  await refresh();
}

// --- the rematch, once the game is scored (an account's seat) ---------------------------------
const canRematch = () => Boolean(me && accountSeats.length && view && view.status === "scored");

async function watchRematch() {
  if (!canRematch() || rematch.watching) return;
  rematch.watching = true;
  drawRematch();
  // the other side's offer comes on the account's stream; one made before it opened is found
  // among the account's games (asked again now and then, should an event be missed)
  lookForRematch();
  listenAccount(onAccountEvent).then(lookForRematch);
  setInterval(() => { if (!rematch.game || rematch.game.status === "open") lookForRematch(); }, 15000);
}

async function lookForRematch() {
  if (rematch.looking) return;
  rematch.looking = true;
  try { await findRematch(); } finally { rematch.looking = false; }
}

async function findRematch() {
  let rows;
  try { rows = (await account.games({ limit: 30 })).games; } catch { return; }
  const n = (view.seats || []).length;
  const candidates = rows.filter((g) => g.game_id !== gameId && g.type === view.type && g.seats.length === n &&
    g.created_at >= createdAt).slice(0, 6);
  for (const g of candidates) {
    const found = await api.summary(g.game_id).catch(() => null);
    if (found && (found.platform_options || {}).rematch_of === gameId) {
      rematch.game = found;
      if (found.status === "expired") rematch.why = await expiredWhyOf(found.game_id);
      break;
    }
  }
  drawRematch();
}

async function onAccountEvent(event) {
  if (!event.type.startsWith("invitation") || event.kind !== "rematch") return;
  if (rematch.game && rematch.game.game_id !== event.game_id) return;
  const found = await api.summary(event.game_id).catch(() => null);
  if (!found || (found.platform_options || {}).rematch_of !== gameId) return;
  rematch.game = found;
  if (event.type === "invitation.expired") rematch.why = event;
  if (event.type === "invitation") toast(`${invitationOf(found, me).askerName} offers a rematch.`);
  drawRematch();
}

function drawRematch() {
  if (!rematch.el) rematch.el = h("div", { class: "rematch", id: "rematch", "aria-live": "polite" });
  const box = rematch.el;
  if (!canRematch()) { replace(box); return; }
  const game = rematch.game;
  const inv = game ? invitationOf(game, me) : null;
  const mySeat = game ? game.seats.findIndex((s) => s.account === me.id) : -1;
  if (!game || !inv) {
    replace(box, h("button", { type: "button", class: "primary", id: "rematch-button", onclick: askRematch }, "Rematch"),
      h("p", { class: "hint" }, "The same table again, the seats moved round by one: the other players are asked to accept."));
  } else if (game.status === "open" && inv.mySeat >= 0) {
    replace(box, h("p", { class: "invite-ask", id: "rematch-offer" }, playerLink(inv.askerName), " offers a rematch."),
      h("div", { class: "actions" },
        h("button", { type: "button", class: "primary", id: "accept-rematch", onclick: (ev) => answerRematch(ev, "accept") }, "Accept"),
        h("button", { type: "button", id: "decline-rematch", onclick: (ev) => answerRematch(ev, "decline") }, "Decline")),
      h("p", { class: "muted small" }, `The offer expires ${timeLeft(inv.expiresAt)}.`));
  } else if (game.status === "open") {
    replace(box, h("p", { id: "rematch-waiting" }, inv.iAsked ? "You offered a rematch: " : "You accepted the rematch: ",
      `waiting for ${listing(inv.waiting)}.`),
    h("a", { class: "button", href: tableHref(game.game_id, mySeat) }, "Open the rematch"));
  } else if (game.status === "expired") {
    replace(box, h("p", { id: "rematch-ended" }, expiredText(game, rematch.why, me)));
  } else {
    replace(box, h("p", { id: "rematch-on" }, "The rematch is on."),
      h("a", { class: "button primary", href: tableHref(game.game_id, mySeat) }, "Play the rematch"));
  }
}

async function askRematch(ev) {
  ev.currentTarget.disabled = true;
  try {
    const made = await matching.rematch(gameId);
    location.href = tableHref(made.game_id, made.seats.findIndex((s) => s.account === me.id));
  } catch (err) {
    toast(`No rematch: ${err.message}`, true);
    ev.currentTarget.disabled = false;
    lookForRematch();
  }
}

async function answerRematch(ev, what) {
  ev.currentTarget.disabled = true;
  const id = rematch.game.game_id;
  try {
    if (what === "accept") { await acceptAndGo(id, me); return; }
    rematch.game = await matching.decline(id);
    rematch.why = { reason: "declined", by: me.id };
  } catch (err) {
    toast(`Could not ${what}: ${err.message}`, true);
    rematch.game = await api.summary(id).catch(() => rematch.game);
  }
  drawRematch();
}

// An abandoned game (nobody moved for the service's ABANDON_AFTER while a person was to act):
// since when, and who did not move.
function abandonedText() {
  const why = abandonedWhy || {};
  const since = why.idle_since ? ` since ${new Date(why.idle_since).toLocaleString()}` : "";
  const whom = (why.to_act || []).map(who).join(", ");
  return `This game was abandoned: nobody moved${since}${whom ? ` while ${whom} was to act` : ""}. It is over, unscored and unrated.`;
}

// --- leaving the game ---------------------------------------------------------------------------
const canLeave = () => seat !== null && view && ["open", "active"].includes(view.status);

// The Leave button, or its confirm step: what leaving means, said before it is done.
function drawLeave() {
  if (!leaving.el) leaving.el = h("div", { class: "leave", id: "leave" });
  const box = leaving.el;
  if (!canLeave()) { leaving.asking = false; replace(box); return box; }
  const level = platform.leave_level || "heuristic";
  box.className = leaving.asking ? "leave asking" : "leave";
  if (!leaving.asking) {
    replace(box, h("button", { type: "button", class: "danger", id: "leave-game",
      onclick: () => { leaving.asking = true; drawLeave(); $("#leave-confirm-yes").focus(); } }, "Leave the game"));
    return box;
  }
  replace(box, h("div", { class: "leave-confirm", role: "group", "aria-labelledby": "leave-question" },
    h("p", { id: "leave-question" }, `Leave this game? A ${level} bot takes your seat over and plays it to the end; `,
      "you cannot come back to it."),
    h("div", { class: "actions" },
      h("button", { type: "button", class: "confirm-yes", id: "leave-confirm-yes", disabled: leaving.busy, onclick: leave },
        "Leave for good"),
      h("button", { type: "button", id: "leave-cancel", disabled: leaving.busy,
        onclick: () => { leaving.asking = false; drawLeave(); $("#leave-game").focus(); } }, "Stay"))));
  return box;
}

async function leave() {
  if (leaving.busy) return;
  leaving.busy = true;
  drawLeave();
  const was = seat;
  try {
    const done = await api.leave(gameId, token);
    toast(`You left the game: a ${done.level} bot plays seat ${done.seat + 1} from now on. You are watching as a spectator.`);
  } catch (err) {
    if (!(err instanceof ApiError && err.code === "seat_left")) {
      toast(`You did not leave: ${err.message}`, true);
      leaving.busy = false;
      leaving.asking = false;
      await refresh();
      return;
    }
  }
  if (asAccount()) accountSeats = accountSeats.filter((s) => s !== was);
  else { forgetSeat(gameId, was); delete tokens[was]; }
  leaving.left = was;
  leaving.busy = false;
  leaving.asking = false;
  seat = null; token = null;
  if (params.has("seat")) history.replaceState(null, "", location.pathname);
  await refresh();
  listen();   // the seat's stream ended with the leave: the spectator's from here
}

function resultText(result) {
  const winners = result.winners || [];
  const scores = result.scores || [];
  return `${winners.map(who).join(" and ")} ${winners.length === 1 ? "wins" : "share the win"}` +
    (scores.length ? ` — scores: ${scores.map((v, i) => `${who(i)} ${v}`).join("; ")}` : "") + ".";
}

async function drawActions(overtaken = () => false) {
  const legal = view.legal_actions || [];
  const heading = h("h2", { id: "actions-h" }, "Your move");
  els.actions.hidden = view.status === "expired";      // it never started: its card says why
  if (view.status === "expired") return;
  if (seat === null) {
    const invited = view.status === "open" && (invitationOf({ platform_options: platform, seats: view.seats }, me) || {}).mySeat >= 0;
    replace(els.actions, h("h2", { id: "actions-h" }, "Actions"), h("p", { class: "muted", id: "spectator-note" }, invited
      ? "Accept the invitation above to take the seat kept for you."
      : leaving.left !== null
        ? (["open", "active"].includes(view.status)
          ? `You left this game: ${who(leaving.left)} plays your seat to the end, and you cannot come back to it. You watch as a spectator.`
          : `You left this game: ${who(leaving.left)} played your seat. You watch as a spectator.`)
        : "Spectators see the public table only. Take an open seat in the lobby to play."));
    return;
  }
  if (!legal.length) {
    const msg = view.status === "active" ? "Nothing to do right now: waiting for the others."
      : view.status === "open" ? "Waiting for the other seats to be taken." : "The game is over.";
    // the end (scored, or ended and being scored): the standings are in the status card above
    const over = view.status === "scored" || view.status === "ended";
    if (view.status === "scored") drawRematch();
    replace(els.actions, over ? h("h2", { id: "actions-h" }, "The game is over") : heading,
      view.status === "scored" ? null : h("p", { class: "muted" }, over ? "Scoring…" : msg),
      view.status === "scored" ? h("p", {}, h("a", { href: "#end-screen" }, "The standings and what made each score")) : null,
      view.status === "scored" ? rematch.el : null,
      view.status === "scored" ? h("a", { class: "button", href: `/web/games/${gameId}/replay` }, "Replay this game") : null);
    return;
  }
  const key = legalKey(seat, legal);
  if (sameLegal(key, actionsDrawn)) return;
  const words = await actionWordsAt(view.version);
  if (overtaken() || sameLegal(key, actionsDrawn)) return;
  const kept = typedValues(els.actions);
  replace(els.actions, heading, actionControls(legal, words.actions, view.type, post));
  actionsDrawn = key;
  const refocus = restoreTyped(els.actions, kept);
  const first = els.actions.querySelector("button, input");
  if (refocus) refocus.focus({ preventScroll: true });
  else if (first && document.activeElement === document.body) first.focus({ preventScroll: true });
}

// The controls are drawn again only when the seat's legal actions change (the same JSON: the
// same controls), so a half-typed amount or a click under way is never lost to an event that
// changed nothing for this seat (the board keeps the same rule: its key holds the legal actions).
let actionsDrawn = null;
const legalKey = (forSeat, legal) => JSON.stringify([forSeat, legal]);
const sameLegal = (key, drawn) => drawn !== null && key === drawn && els.actions.querySelector(".controls") !== null;

// The words of the seat's legal actions at a version, asked once (drawActions and the board ask alike).
const actionWords = { key: null, answer: null };
function actionWordsAt(version) {
  const key = `${seat}:${version}`;
  if (actionWords.key !== key) {
    actionWords.key = key;
    actionWords.answer = api.words(gameId, token, { actions: true, version }).catch((err) => {
      actionWords.key = null;
      throw err;
    });
  }
  return actionWords.answer;
}

// What a person typed into a template's fields (not its drawn default), by the template and field.
function typedValues(box) {
  const out = new Map();
  for (const form of box.querySelectorAll("form.template")) {
    for (const input of form.querySelectorAll("input")) {
      if (input.value !== input.defaultValue || input === document.activeElement) {
        out.set(`${form.dataset.action}|${input.name}`, { value: input.value, focused: input === document.activeElement });
      }
    }
  }
  return out;
}

// Typed values put back into the templates that still exist; the field that had the focus, if any.
function restoreTyped(box, kept) {
  let focus = null;
  for (const form of box.querySelectorAll("form.template")) {
    for (const input of form.querySelectorAll("input")) {
      const typed = kept.get(`${form.dataset.action}|${input.name}`);
      if (!typed) continue;
      input.value = typed.value;
      if (typed.focused) focus = input;
    }
  }
  return focus;
}

async function post(action) {
  if (busy) return;
  busy = true;
  els.actions.setAttribute("aria-busy", "true");
  try {
    const done = await api.act(gameId, token, action);
    noteEvents(done.events || []);
  } catch (err) {
    toast(err.status === 409 ? "The game moved on before your move arrived: here is the table now."
      : `Not accepted: ${err.message}`, true);
  } finally {
    busy = false;
    els.actions.removeAttribute("aria-busy");
    await refresh();
  }
}

// The move list: every event held, newest first, each a link to the replay at its version; the
// earlier moves a window at a time on demand.
const logParts = { list: null, earlier: null };
function drawLog() {
  if (!logParts.list) {
    logParts.list = h("ol", { class: "events move-list", reversed: true, id: "move-list" });
    logParts.earlier = h("p", { class: "earlier" });
    replace(els.log, h("h2", { id: "log-h" }, "What happened"),
      h("p", { class: "small muted" }, "Newest first; open one to replay the game from that move."),
      logParts.list, logParts.earlier,
      h("p", { class: "small" }, h("a", { href: `/web/games/${gameId}/replay` }, "Step through the whole game (replay)")));
  }
  const replayAt = (v) => `/web/games/${encodeURIComponent(gameId)}/replay?at=${v}`;
  replace(logParts.list, log.list().reverse().map((e) =>
    h("li", { value: e.version, dataset: { version: e.version } },
      h("a", { href: replayAt(e.version), class: "move" }, h("span", { class: "v" }, `#${e.version}`), " ", e.text))));
  const busy = Boolean(log.earlierRunning);
  replace(logParts.earlier, log.hasEarlier ? h("button", { type: "button", id: "earlier-moves", disabled: busy,
    "aria-describedby": "earlier-what", onclick: showEarlier }, busy ? "Loading earlier moves…" : "Show earlier moves") : null,
  log.hasEarlier ? h("span", { class: "small muted", id: "earlier-what" }, ` #1 to #${log.from} not loaded`) : null);
  document.body.dataset.logFrom = String(log.from ?? 0);
  document.body.dataset.logTo = String(log.to);
}

async function showEarlier() {
  const done = log.earlier();
  drawLog();
  try { await done; } catch (err) { toast(`Could not load the earlier moves: ${err.message}`, true); }
  drawLog();
  $("#earlier-moves")?.focus();
}

// The board, with the seat's legal actions on its pieces (draw/play.js): their words are the
// button list's (actionWordsAt: one request per version and seat), the board drawn again when
// they arrive. A board that would come out
// the same is not drawn again (a click on a piece is never lost to an unrelated event), and the
// piece that had the focus gets it back after a redraw.
const boardWords = { key: null, labels: null, asking: null };
let boardDrawn = null;

function drawBoard(force = false) {
  const draw = look.draw;
  els.board.hidden = view.status === "expired";
  if (view.status === "expired") { replace(els.board); boardDrawn = null; return; }
  const legal = seat !== null && view.status === "active" ? view.legal_actions || [] : [];
  const wordsKey = `${seat}:${view.version}`;
  if (legal.length && boardWords.key !== wordsKey) {
    if (boardWords.asking !== wordsKey) {
      boardWords.asking = wordsKey;
      actionWordsAt(view.version).then((words) => {   // the same request as the button list's
        boardWords.key = wordsKey;
        boardWords.labels = words.actions || [];
        // the view on screen may be another object of the same version (a refresh read it again)
        if (`${seat}:${view.version}` === wordsKey) drawBoard();
      }).catch(() => { boardWords.asking = null; });
    }
  }
  const ready = !legal.length || boardWords.key === wordsKey;
  const ctx = { g: glossary, who, viewer: seat, view, seats: view.seats,
    legal: ready ? legal : [], labels: ready && legal.length ? boardWords.labels : [], post, redraw: () => drawBoard(true) };
  const drawnKey = JSON.stringify([view.state, ctx.legal, ctx.labels, seat, labels]);
  if (!force && drawnKey === boardDrawn) return;
  boardDrawn = drawnKey;
  const focused = els.board.contains(document.activeElement) ? document.activeElement.dataset.key : null;
  replace(els.board, view.state ? draw(view.state, ctx) : h("p", { class: "card muted" }, "The game has not started yet."));
  const asked = els.board.querySelector("[data-autofocus]");   // a confirm step just opened
  const again = focused && [...els.board.querySelectorAll("[data-key]")].find((el) => el.dataset.key === focused);
  if (asked) asked.focus({ preventScroll: true });
  else if (again) again.focus({ preventScroll: true });
}

async function refresh() {
  clearTimeout(refreshTimer);
  refreshTimer = null;
  const mine = ++refreshes;
  const overtaken = () => mine !== refreshes;
  try {
    const sent = Date.now();
    const fresh = await fetchView();
    if (overtaken()) return;
    view = fresh;
    countdown.sync(view.server_time, sent, Date.now());
    // the seat labels come with the log's words of this version, else are asked on their own
    await reachLog(view.version);
    if (overtaken()) return;
    labels = logLabels.version >= view.version && logLabels.as === token ? labelsFrom(logLabels.labels) : await readLabels();
    if (overtaken()) return;
    askRatings(view.seats);
    const yours = seat !== null && view.status === "active" && (view.to_act || []).includes(seat) &&
      (view.legal_actions || []).length > 0;
    alerts.update(yours, `${look.title}, game ${gameId}`);
    drawStatus();
    countdown.show(view, who, seat);
    drawBoard();
    await drawActions(overtaken);
    if (overtaken()) return;
    drawInvite();
    if (canRematch()) watchRematch();
    document.body.dataset.version = String(view.version);
    document.body.dataset.status = view.status;
    // who this page plays as, for the table chat (chat.js)
    document.dispatchEvent(new CustomEvent("table:view", { detail: { seat, who: token, me, view, labels } }));
  } catch (err) {
    toast(`Could not read the game: ${err.message}`, true);
  }
}

function soon() {
  if (!refreshTimer) refreshTimer = setTimeout(refresh, 120);
}

async function listen() {
  if (source) source.close();
  if (view && ["scored", "expired", "abandoned"].includes(view.status)) return;
  let ticket = null;       // the account's stream goes with its cookie (same origin), others with a ticket
  if (!asAccount()) {
    try { ticket = (await api.ticket(gameId, token)).ticket; } catch (err) {
      setTimeout(listen, 3000);
      return;
    }
  }
  source = new EventSource(api.streamUrl(gameId, asAccount() ? token : null, log.target, ticket));
  source.addEventListener("game-event", (msg) => {
    const body = JSON.parse(msg.data);
    if (body.event.version > log.target) {
      noteEvents([body.event]);
      soon();
    }
    if (["scored", "expired", "abandoned"].includes(body.status)) { source.close(); soon(); }
  });
  source.onerror = () => {
    // The stream ends at its time limit, at the end of the game, or when the ticket has
    // expired: a new ticket, resumed after the last version seen.
    source.close();
    if (!view || !["scored", "expired", "abandoned"].includes(view.status)) setTimeout(() => { refresh(); listen(); }, 1000);
  };
}

async function start() {
  me = await nav([[`/web/games/${gameId}/replay`, "Replay"]]);
  replace(main, els.header, els.invite, els.actions, els.board, els.log);
  try {
    const summary = await api.summary(gameId);
    platform = summary.platform_options || {};
    createdAt = summary.created_at || 0;
    choose(me, me ? summary.seats : []);
    view = await fetchView();
    [glossary, look] = await Promise.all([api.glossary(view.type), gameLook(view.type)]);
  } catch (err) {
    replace(main, h("p", { class: "error card" }, `No such game, or the service did not answer: ${err.message}`));
    return;
  }
  alerts.setTitle(`${look.title} · Speculation games`);
  // a recent window of the log, not every event: earlier moves on demand
  await log.open(view.version).catch(() => {});
  if (["expired", "abandoned"].includes(view.status)) {
    // why it ended is in its last event's data, which the words do not carry
    noteEvents((await api.events(gameId, token, Math.max(0, view.version - 5)).catch(() => ({ events: [] }))).events);
  }
  await refresh();
  listen();
}

start();
