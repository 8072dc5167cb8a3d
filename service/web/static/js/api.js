// The public JSON API (/v1) and the words endpoint; a seat's token kept across reloads.
// The words endpoint is asked for a game by id, with the seat's own token (or none: the
// spectator): the server puts its own record into words, never anything the page sends.
//
// Requests go without cookies (credentials "omit"), as a seat token's or a spectator's,
// unless a call asks for the account's session (`session: true`): then the browser sends the
// HttpOnly session cookie and, on a request that changes anything, the X-CSRF-Token header
// (GET /v1/account's csrf_token, kept here by setCsrf).
const JSON_HEADERS = { "Content-Type": "application/json", Accept: "application/json" };
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);
let csrfToken = null;

export function setCsrf(value) { csrfToken = value || null; }

export class ApiError extends Error {
  constructor(status, body, retryAfter = null) {
    const err = (body && body.error) || {};
    super(err.message || `HTTP ${status}`);
    this.status = status;
    this.code = err.code;
    this.details = err.details || {};
    // seconds to wait (429): the Retry-After header, else the error's details
    const wait = Number(retryAfter || this.details.retry_after);
    this.retryAfter = Number.isFinite(wait) && wait > 0 ? wait : null;
  }
}

async function call(method, path, { token, body, headers, session, keepalive } = {}) {
  const h = { ...JSON_HEADERS, ...(headers || {}) };
  if (token) h.Authorization = `Bearer ${token}`;
  else if (session && !SAFE.has(method) && csrfToken) h["X-CSRF-Token"] = csrfToken;
  let response;
  for (let attempt = 0; ; attempt++) {
    response = await fetch(path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store", credentials: session && !token ? "same-origin" : "omit", keepalive: Boolean(keepalive) });
    // Verify, export and replay are bounded per address (429 too_many_audits): wait as told, a few times.
    if (response.status !== 429 || method !== "GET" && path !== "/web/api/words" || attempt >= 3) break;
    const wait = Math.min(Number(response.headers.get("Retry-After")) || 1, 5);
    await new Promise((done) => setTimeout(done, wait * 1000));
  }
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!response.ok) throw new ApiError(response.status, data, response.headers.get("Retry-After"));
  return data;
}

// Who a game's call is made as (`as`): a seat token (a string, a guest's seat), the
// account's session ({session: true, seat, several}: the cookie, the seat named when the
// account holds several of the game's seats), or null (the spectator).
function as(who) {
  return typeof who === "string" ? { token: who } : who && who.session ? { session: true } : {};
}
function seatOf(who) {
  return who && who.session && who.several && Number.isInteger(who.seat) ? who.seat : undefined;
}
function withSeat(path, who) {
  const seat = seatOf(who);
  return seat === undefined ? path : `${path}${path.includes("?") ? "&" : "?"}seat=${seat}`;
}

export const api = {
  gameTypes: () => call("GET", "/v1/game-types"),
  games: (params) => call("GET", "/v1/games?" + new URLSearchParams(params)),
  create: (body) => call("POST", "/v1/games", { body, headers: { "Idempotency-Key": newKey("create") } })
    .then((answer) => keep(answer, "game")),
  claim: (id, seat, name) => call("POST", `/v1/games/${id}/seats/${seat}`, { body: { name },
    headers: { "Idempotency-Key": newKey("claim") } }).then((answer) => keep(answer, seat)),
  // an open seat taken as the signed-in account (no name: the seat shows its username)
  claimAsAccount: (id, seat) => call("POST", `/v1/games/${id}/seats/${seat}`, { body: {}, session: true,
    headers: { "Idempotency-Key": newKey("claim") } }).then((answer) => keep(answer, seat)),
  summary: (id) => call("GET", `/v1/games/${id}`),
  view: (id, who) => call("GET", withSeat(`/v1/games/${id}/view`, who), as(who)),
  act: (id, who, action) => call("POST", `/v1/games/${id}/actions`, { ...as(who),
    body: seatOf(who) === undefined ? { action } : { action, seat: seatOf(who) },
    headers: { "Idempotency-Key": newKey("act") } }).then((answer) => keep(answer, actingSeat(id, who, answer))),
  // leave the game as this seat: a bot takes it over, and the seat's credentials are refused from then on
  leave: (id, who) => call("POST", `/v1/games/${id}/leave`, { ...as(who),
    body: seatOf(who) === undefined ? {} : { seat: seatOf(who) },
    headers: { "Idempotency-Key": newKey("leave") } }).then((answer) => keep(answer, answer.seat)),
  // a game's dispute bundle (docs/audit.md) as this seat (its signed receipts) or a spectator
  bundle: (id, who) => call("GET", withSeat(`/v1/games/${id}/bundle`, who), as(who)),
  events: (id, who, after = 0) => call("GET", withSeat(`/v1/games/${id}/events?after=${after}`, who), as(who)),
  // the live stream's address: the account's opens it with its cookie, others with a ticket
  streamUrl: (id, who, after, ticket) => withSeat(`/v1/games/${encodeURIComponent(id)}/events?after=${after}` +
    (ticket ? `&ticket=${encodeURIComponent(ticket)}` : ""), who),
  ticket: (id, token) => call("POST", `/v1/games/${id}/stream-tickets`, { token }),
  replay: (id, at, token) => call("GET", `/v1/games/${id}/replay?at=${at}`, { token }),
  ledger: (id, token) => call("GET", `/v1/games/${id}/ledger`, { token }),
  verify: (id) => call("GET", `/v1/games/${id}/verify`),
  exportText: async (id, token) => {
    const headers = { Accept: "application/x-ndjson" };
    if (token) headers.Authorization = `Bearer ${token}`;
    const response = await fetch(`/v1/games/${id}/export`, { headers, cache: "no-store", credentials: "omit" });
    if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
    return response.text();
  },
  // Words for a game as this seat (token), the account's seat or a spectator (null) may see
  // it: seat labels and the result always; `{actions: true, version}` the seat's legal
  // actions at that version, `{at}` after the end every hand revealed at that version.
  words: (id, who, ask = {}) => call("POST", "/web/api/words", { ...as(who), body: wordsBody(id, who, ask) }),
  // The events in (after, until] in words, as this seat may see them; the server answers a
  // page at a time (events_until: where it stopped).
  eventWords: async (id, who, after, until) => {
    const out = [];
    while (after < until) {
      const page = await call("POST", "/web/api/words", { ...as(who), body: wordsBody(id, who, { after, until }) });
      out.push(...page.events);
      if (page.events_until <= after) break;
      after = page.events_until;
    }
    return out;
  },
  glossary: (type) => call("GET", `/web/api/glossary/${encodeURIComponent(type)}`),
};

// The table chat (docs/api.md "Chat"), as the table's seat (a token, the account's session) or a
// spectator (null); the spectators' channel is written as the signed-in account ({session: true}).
// Every text that comes back is plain text: shown with textContent, never as HTML.
export const chat = {
  presets: () => call("GET", "/v1/chat/presets"),
  read: (id, who, after = 0) => call("GET", withSeat(`/v1/games/${encodeURIComponent(id)}/chat?after=${after}`, who), as(who)),
  say: (id, who, channel, said) => call("POST", `/v1/games/${encodeURIComponent(id)}/chat`, { ...as(who),
    body: { channel, ...said, ...(seatOf(who) === undefined ? {} : { seat: seatOf(who) }) },
    headers: { "Idempotency-Key": newKey("chat") } }),
  mute: (id, who, target) => call("POST", `/v1/games/${encodeURIComponent(id)}/chat/mutes`, { ...as(who),
    body: seatOf(who) === undefined ? { target } : { target, seat: seatOf(who) } }),
  unmute: (id, who, target) => call("DELETE", withSeat(`/v1/games/${encodeURIComponent(id)}/chat/mutes/${target}`, who), as(who)),
};

function wordsBody(id, who, ask) {
  const seat = who && who.session && Number.isInteger(who.seat) ? who.seat : undefined;
  return seat === undefined ? { game_id: id, ...ask } : { game_id: id, seat, ...ask };
}

// The account's own endpoints (docs/accounts.md), always with the session cookie; every
// state-changing one sends X-CSRF-Token.
export const account = {
  whoami: () => call("GET", "/v1/account", { session: true }),
  signUp: (username, password) => call("POST", "/v1/accounts", { body: { username, password } }),
  signIn: (username, password) => call("POST", "/v1/sessions", { session: true,
    body: { username, password, use_cookie: true } }),
  signOut: () => call("DELETE", "/v1/session", { session: true }),
  recover: (username, code, password) => call("POST", "/v1/account/recover", {
    body: { username, recovery_code: code, new_password: password } }),
  games: (params) => call("GET", "/v1/account/games?" + new URLSearchParams(params), { session: true }),
  events: (after) => call("GET", `/v1/account/events?after=${after}`, { session: true }),
  tokens: () => call("GET", "/v1/account/tokens", { session: true }),
  createToken: (body) => call("POST", "/v1/account/tokens", { session: true, body }),
  revoke: (id) => call("DELETE", `/v1/account/tokens/${encodeURIComponent(id)}`, { session: true }),
  password: (current, next) => call("POST", "/v1/account/password", { session: true,
    body: { current_password: current, new_password: next } }),
  signOutEverywhere: () => call("POST", "/v1/account/sign-out-everywhere", { session: true }),
  recoveryCodes: (password) => call("POST", "/v1/account/recovery-codes", { session: true, body: { password } }),
  close: (password) => call("POST", "/v1/account/close", { session: true, body: { password } }),
};

// Finding a game (docs/matching.md), as the signed-in account (the cookie, X-CSRF-Token on each):
// a challenge (seats `{"me": true}`, `{"account": name}`, `{"bot": level}`, `{}`), its accept,
// decline or cancel, a rematch of a finished game, a seek (quick pairing) and who may challenge you.
const gamePath = (id) => encodeURIComponent(id);
export const matching = {
  // (the answers' signed receipts, when they carry one, are kept as the table's are)
  challenge: (body) => call("POST", "/v1/challenges", { session: true, body }).then((a) => keep(a, "account")),
  accept: (id) => call("POST", `/v1/challenges/${gamePath(id)}/accept`, { session: true }).then((a) => keep(a, "account")),
  decline: (id) => call("POST", `/v1/challenges/${gamePath(id)}/decline`, { session: true }),
  cancel: (id) => call("POST", `/v1/challenges/${gamePath(id)}/cancel`, { session: true }),
  rematch: (id) => call("POST", `/v1/games/${gamePath(id)}/rematch`, { session: true, body: {} })
    .then((a) => keep(a, "account")),
  seek: (body) => call("POST", "/v1/seeks", { session: true, body }),
  seeks: () => call("GET", "/v1/seeks", { session: true }),
  // `leaving`: sent as the page goes away (the request outlives the page)
  cancelSeek: (id, leaving = false) => call("DELETE", `/v1/seeks/${encodeURIComponent(id)}`, { session: true,
    keepalive: leaving }),
  preferences: () => call("GET", "/v1/account/preferences", { session: true }),
  setPreferences: (challenges) => call("PUT", "/v1/account/preferences", { session: true, body: { challenges } }),
};

// Ratings (docs/ratings.md): public reads, no credentials. A leaderboard a page at a time, a
// player's profile (its rating per game type, its latest games) and its rating after each of
// its rated games of a type.
export const ratings = {
  leaderboard: (type, offset = 0, limit = 25) => call("GET",
    `/v1/leaderboards/${encodeURIComponent(type)}?offset=${offset}&limit=${limit}`),
  profile: (username) => call("GET", `/v1/accounts/${encodeURIComponent(username)}`),
  history: (username, type) => call("GET",
    `/v1/accounts/${encodeURIComponent(username)}/ratings/${encodeURIComponent(type)}`),
};

export function newKey(kind) {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return `web-${kind}-` + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// Seat tokens: localStorage "speculation.seats" = {game_id: {seat: token}}. Kept on this
// device only; a token is sent only to its own game's endpoints.
const STORE = "speculation.seats";

export function seatTokens(gameId) {
  try {
    const all = JSON.parse(localStorage.getItem(STORE) || "{}");
    return all[gameId] || {};
  } catch { return {}; }
}

export function rememberSeat(gameId, seat, token) {
  let all = {};
  try { all = JSON.parse(localStorage.getItem(STORE) || "{}"); } catch { all = {}; }
  all[gameId] = { ...(all[gameId] || {}), [seat]: token };
  localStorage.setItem(STORE, JSON.stringify(all));
}

export function forgetSeat(gameId, seat) {
  let all = {};
  try { all = JSON.parse(localStorage.getItem(STORE) || "{}"); } catch { all = {}; }
  if (all[gameId]) delete all[gameId][seat];
  localStorage.setItem(STORE, JSON.stringify(all));
}

// The service's signed receipts of this device's own commands (docs/audit.md), kept to check
// the game's log later (the replay page's bundle check): localStorage "speculation.receipts" =
// {game_id: {seat: [receipt]}} ("game": the creation's). A receipt is kept once; a game keeps
// at most KEPT_PER_GAME, the latest.
const RECEIPTS = "speculation.receipts";
const KEPT_PER_GAME = 2000;

function keep(answer, seat) {
  const receipt = answer && answer.receipt;
  if (!receipt || receipt.format !== "speculation-receipt/1" || typeof receipt.game !== "string") return answer;
  try {
    const all = JSON.parse(localStorage.getItem(RECEIPTS) || "{}");
    const game = all[receipt.game] || (all[receipt.game] = {});
    const list = game[String(seat)] || (game[String(seat)] = []);
    if (!list.some((r) => r.version === receipt.version && r.head === receipt.head && r.signature === receipt.signature)) {
      list.push(receipt);
      if (list.length > KEPT_PER_GAME) list.splice(0, list.length - KEPT_PER_GAME);
      localStorage.setItem(RECEIPTS, JSON.stringify(all));
    }
  } catch { /* storage full or refused: the answer stands, the receipt is not kept */ }
  return answer;
}

function actingSeat(id, who, answer) {
  const first = (answer && answer.events || [])[0];
  if (first && first.cmd && Number.isInteger(first.cmd.seat)) return first.cmd.seat;
  if (who && Number.isInteger(who.seat)) return who.seat;
  const held = Object.entries(seatTokens(id)).find(([, token]) => token === who);
  return held ? Number(held[0]) : "?";
}

// Every receipt this device kept for a game, whichever seat's.
export function keptReceipts(gameId) {
  try {
    const game = JSON.parse(localStorage.getItem(RECEIPTS) || "{}")[gameId] || {};
    return Object.values(game).flat();
  } catch { return []; }
}

export function gameIdFromPath() {
  const m = location.pathname.match(/\/web\/games\/([^/]+)/);
  return m ? decodeURIComponent(m[1]) : null;
}

// A seat as a person reads it: people count seats from 1 (the API's seat 0 is "Seat 1").
export function seatLabel(seats, seat, viewer) {
  if (seat === null || seat === undefined) return "nobody";
  const info = (seats || [])[seat] || {};
  let label = info.kind === "player" && info.name ? info.name
    : info.kind === "bot" ? (info.left && info.name ? `Bot ${seat + 1} (${info.name} left)` : `Bot ${seat + 1}`) : `Seat ${seat + 1}`;
  if (info.kind === "player" && info.guest) label += " (guest)";
  if (viewer !== null && viewer !== undefined && seat === viewer) label += " (you)";
  return label;
}

// The hosted games as the service declares them (GET /v1/game-types, in the lobby's order, each
// with its title and drawer): fetched once a page, so no page lists the games itself.
let declaredTypes = null;
export function gameTypes() {
  declaredTypes = declaredTypes || api.gameTypes().then((r) => r.game_types)
    .catch((err) => { declaredTypes = null; throw err; });
  return declaredTypes;
}
