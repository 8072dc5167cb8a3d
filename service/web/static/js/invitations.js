// Challenges and rematch offers (docs/matching.md) as the pages show them: who asked whom, the
// seats still reserved for someone, why one ended; and the invitations box of the lobby and My
// games — incoming ones with Accept / Decline, the account's own with Cancel — read from the
// account's games (an invitation is an open game with a seat reserved for an account) and
// kept live from the account's stream (`invitation`, `invitation.accepted`, `invitation.expired`).
// Every name goes in as text.
import { api, account, matching } from "./api.js";
import { h, replace, plural } from "./dom.js";
import { toast } from "./ui.js";
import { playerLink, clockText } from "./ratings.js";

// "in 9 min", "in 40 s", "in 2 h", "in 3 days" (ms since the epoch).
export function timeLeft(at) {
  const secs = Math.round((at - Date.now()) / 1000);
  if (secs <= 0) return "any moment now";
  if (secs < 90) return `in ${secs} s`;
  if (secs < 5400) return `in ${Math.round(secs / 60)} min`;
  if (secs < 172800) return `in ${Math.round(secs / 3600)} h`;
  return `in ${Math.round(secs / 86400)} days`;
}

// A list of names for a sentence: "bob", "bob and carol", "bob, carol and dave".
export function listing(names) {
  return names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

// An account's name as a game's seats show it: the player's name, or the name a seat is reserved for.
export function nameIn(seats, accountId) {
  const seated = (seats || []).find((s) => s.account === accountId && s.name);
  if (seated) return seated.name;
  const reserved = (seats || []).find((s) => s.reserved === accountId && s.invited);
  return reserved ? reserved.invited : "someone";
}

// What a game's summary says of its invitation, or null when it is none: `kind` challenge or
// rematch, the asker and its name, the names still waited for, the seat reserved for `me`.
export function invitationOf(summary, me) {
  const platform = (summary && summary.platform_options) || {};
  const asker = platform.challenger || platform.rematch_by;
  if (!asker || !platform.expires_at) return null;
  const seats = summary.seats || [];
  const waiting = seats.filter((s) => s.kind === "open" && s.reserved).map((s) => s.invited || "someone");
  const mySeat = me ? seats.findIndex((s) => s.kind === "open" && s.reserved === me.id) : -1;
  const seated = me ? seats.findIndex((s) => s.account === me.id) : -1;
  return { kind: platform.rematch_of ? "rematch" : "challenge", asker, askerName: nameIn(seats, asker),
    iAsked: Boolean(me && asker === me.id), waiting, mySeat, seated, expiresAt: platform.expires_at,
    rematchOf: platform.rematch_of || null, rated: Boolean(platform.rated), turnTimeout: platform.turn_timeout };
}

// Why an expired invitation ended, in words: the game.expired event's data ({reason, by}).
export function expiredText(summary, why, me) {
  const kind = (summary.platform_options || {}).rematch_of ? "rematch offer" : "challenge";
  const by = why && why.by;
  const who = by && me && by === me.id ? "You" : by ? nameIn(summary.seats, by) : null;
  const reason = (why && why.reason) || "expired";
  if (reason === "declined") return `${who || "An invited player"} declined the ${kind}.`;
  if (reason === "cancelled") return `${who || "The asker"} cancelled the ${kind}.`;
  return `Nobody accepted in time: the ${kind} expired.`;
}

// Why a game expired, from its public events (the game.expired event's data), or null.
export async function expiredWhyOf(gameId) {
  try {
    const events = (await api.events(gameId, null, 0)).events;
    const ended = events.find((e) => e.type === "game.expired");
    return ended ? ended.data : null;
  } catch { return null; }
}

// "Big Shot · 3 players (1 open seat, 1 bot) · rated · 5 min a move"
export function gameFacts(summary, titleOf) {
  const seats = summary.seats || [];
  const open = seats.filter((s) => s.kind === "open" && !s.reserved).length;
  const bots = seats.filter((s) => s.kind === "bot").length;
  const extra = [open ? plural(open, "open seat") : null, bots ? plural(bots, "bot") : null].filter(Boolean);
  const platform = summary.platform_options || {};
  return [titleOf(summary.type), `${seats.length} players${extra.length ? ` (${extra.join(", ")})` : ""}`,
    platform.rated ? "rated" : null, clockText(platform.turn_timeout) || null].filter(Boolean).join(" · ");
}

export const tableHref = (id, seat) => `/web/games/${encodeURIComponent(id)}${seat >= 0 ? `?seat=${seat}` : ""}`;
const seatOf = (summary, me) => (summary.seats || []).findIndex((s) => s.account === me.id);

// Accept an invitation and go to its table as the seat just taken.
export async function acceptAndGo(gameId, me) {
  const summary = await matching.accept(gameId);
  location.href = tableHref(gameId, seatOf(summary, me));
}

// The invitations box: {el, load(), onEvent(event)}. Hidden while there is none.
export function invitationsBox(me, { titleOf = (t) => t, id = "invitations" } = {}) {
  const el = h("section", { class: "card invitations", id, "aria-labelledby": `${id}-h`, hidden: true });
  const shown = new Map();       // game id → {summary, why (an invitation.expired event), at}
  let timer = null;

  function row(gameId, { summary, why }) {
    const inv = invitationOf(summary, me);
    if (!inv) return null;
    const what = inv.kind === "rematch" ? "a rematch" : "a game";
    const facts = h("div", { class: "small muted" }, gameFacts(summary, titleOf));
    const buttons = [];
    let text;
    let state = summary.status;
    if (summary.status === "expired") {
      text = [expiredText(summary, why, me)];
    } else if (summary.status !== "open") {
      state = "started";
      text = [inv.iAsked ? `${listing(summaryNames(summary, inv))} accepted: ` : "Accepted: ", "the game is on."];
      buttons.push(h("a", { class: "button primary", href: tableHref(gameId, seatOf(summary, me)) }, "Play"));
    } else if (inv.mySeat >= 0) {
      text = [playerLink(inv.askerName), inv.kind === "rematch" ? " offers you a rematch" : " challenges you to a game"];
      buttons.push(
        h("button", { type: "button", class: "primary accept", onclick: (ev) => act(ev, gameId, "accept") }, "Accept"),
        h("button", { type: "button", class: "decline", onclick: (ev) => act(ev, gameId, "decline") }, "Decline"),
        h("a", { class: "button", href: tableHref(gameId, -1) }, "See the table"));
    } else if (inv.iAsked) {
      text = [`You offered ${what} to `, joinLinks(inv.waiting), `: waiting for ${inv.waiting.length > 1 ? "them" : "an answer"}`];
      buttons.push(h("a", { class: "button", href: tableHref(gameId, seatOf(summary, me)) }, "Open the table"),
        h("button", { type: "button", class: "cancel", onclick: (ev) => act(ev, gameId, "cancel") },
          inv.kind === "rematch" ? "Cancel the offer" : "Cancel the challenge"));
    } else {
      text = [playerLink(inv.askerName), `'s ${inv.kind}: waiting for `, joinLinks(inv.waiting)];
      buttons.push(h("a", { class: "button", href: tableHref(gameId, seatOf(summary, me)) }, "Open the table"));
    }
    const dir = inv.mySeat >= 0 ? "in" : inv.iAsked ? "out" : "other";
    return h("li", { class: `invitation ${state}`, dataset: { game: gameId, kind: inv.kind, dir, status: state } },
      h("div", { class: "invite-text" }, h("span", { class: `badge kind-${inv.kind}` }, inv.kind), " ", text),
      facts,
      summary.status === "open" ? h("div", { class: "small muted" }, `Expires ${timeLeft(inv.expiresAt)}`) : null,
      buttons.length ? h("div", { class: "actions" }, buttons) : null);
  }

  // the accounts seated now that the invitation had reserved seats for (the asker's accepters)
  function summaryNames(summary, inv) {
    const names = (summary.seats || []).filter((s) => s.account && s.account !== inv.asker && s.name).map((s) => s.name);
    return names.length ? names : ["They"];
  }

  function joinLinks(names) {
    return names.map((n, i) => [i ? (i === names.length - 1 ? " and " : ", ") : "", playerLink(n)]);
  }

  async function act(ev, gameId, what) {
    const button = ev.currentTarget;
    button.disabled = true;
    try {
      if (what === "accept") { await acceptAndGo(gameId, me); return; }
      const summary = await matching[what](gameId);
      const before = shown.get(gameId);
      shown.set(gameId, { summary, why: { reason: what === "decline" ? "declined" : "cancelled", by: me.id },
        at: before ? before.at : summary.created_at });
      draw();
    } catch (err) {
      toast(`Could not ${what}: ${err.message}`, true);
      refreshOne(gameId);
    } finally {
      button.disabled = false;
    }
  }

  function draw() {
    const items = [...shown.entries()].sort((a, b) => b[1].at - a[1].at).map(([id, item]) => row(id, item)).filter(Boolean);
    const incoming = items.filter((li) => li.dataset.dir === "in" && li.dataset.status === "open").length;
    el.hidden = !items.length;
    replace(el, h("h2", { id: `${id}-h` }, "Invitations",
      incoming ? h("span", { class: "badge turn-badge", id: `${id}-count` }, `${incoming} for you`) : null),
    h("ul", { class: "games invitation-list", "aria-live": "polite" }, items));
    document.body.dataset.invitations = String(incoming);
    clearInterval(timer);
    timer = items.length ? setInterval(draw, 20000) : null;      // the "expires in" times move on
  }

  async function refreshOne(gameId, why) {
    let summary;
    try { summary = await api.summary(gameId); } catch { return null; }   // gone: nothing to show
    const inv = invitationOf(summary, me);
    if (!inv) return null;
    const before = shown.get(gameId);
    let reason = why || (before && before.why);
    if (!reason && summary.status === "expired") reason = await expiredWhyOf(gameId);
    shown.set(gameId, { summary, why: reason, at: (before && before.at) || summary.created_at });
    draw();
    return inv;
  }

  async function load() {
    let rows = [];
    try {
      rows = (await account.games({ status: "active", limit: 50 })).games;
    } catch { return; }
    // an invitation: an open game with a seat reserved for an account (this one's, or the
    // others' of a game this account sits at)
    const open = rows.filter((g) => g.status === "open" && g.seats.some((s) => s.kind === "open" && s.reserved))
      .slice(0, 20);
    const summaries = await Promise.all(open.map((g) => api.summary(g.game_id).catch(() => null)));
    summaries.forEach((summary) => {
      if (summary && summary.status === "open" && invitationOf(summary, me)) {
        const before = shown.get(summary.game_id);
        shown.set(summary.game_id, { summary, why: null, at: before ? before.at : summary.created_at });
      }
    });
    // one shown open and no longer among them was answered meanwhile: read how
    const listed = new Set(open.map((g) => g.game_id));
    await Promise.all([...shown.entries()].filter(([id, item]) => item.summary.status === "open" && !listed.has(id))
      .map(([id]) => refreshOne(id)));
    draw();
  }

  function onEvent(event) {
    if (event.type === "invitation") {
      refreshOne(event.game_id).then((inv) => {
        if (inv && inv.mySeat >= 0) {
          toast(inv.kind === "rematch" ? `${inv.askerName} offers you a rematch.` : `${inv.askerName} challenges you.`);
        }
      });
    } else if (event.type === "invitation.accepted" || event.type === "invitation.expired") {
      refreshOne(event.game_id, event.type === "invitation.expired" ? event : null);
    } else if ((event.type === "game.started" || event.type === "game.joined") && shown.has(event.game_id)) {
      refreshOne(event.game_id);
    }
  }

  // now and then (should an event be missed): read the list again
  let every = null;
  function keepFresh(ms = 15000) {
    clearInterval(every);
    every = setInterval(load, ms);
  }

  return { el, load, onEvent, keepFresh };
}
