// The public JSON API (/v1) and the words endpoint; a seat's token kept across reloads.
// The words endpoint is asked for a game by id, with the seat's own token (or none: the
// spectator): the server puts its own record into words, never anything the page sends.
const JSON_HEADERS = { "Content-Type": "application/json", Accept: "application/json" };

export class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(err.message || `HTTP ${status}`);
    this.status = status;
    this.code = err.code;
    this.details = err.details || {};
  }
}

async function call(method, path, { token, body, headers } = {}) {
  const h = { ...JSON_HEADERS, ...(headers || {}) };
  if (token) h.Authorization = `Bearer ${token}`;
  let response;
  for (let attempt = 0; ; attempt++) {
    response = await fetch(path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store", credentials: "omit" });
    // Verify, export and replay are bounded per address (429 too_many_audits): wait as told, a few times.
    if (response.status !== 429 || method !== "GET" && path !== "/web/api/words" || attempt >= 3) break;
    const wait = Math.min(Number(response.headers.get("Retry-After")) || 1, 5);
    await new Promise((done) => setTimeout(done, wait * 1000));
  }
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export const api = {
  gameTypes: () => call("GET", "/v1/game-types"),
  games: (params) => call("GET", "/v1/games?" + new URLSearchParams(params)),
  create: (body) => call("POST", "/v1/games", { body, headers: { "Idempotency-Key": newKey("create") } }),
  claim: (id, seat, name) => call("POST", `/v1/games/${id}/seats/${seat}`, { body: { name },
    headers: { "Idempotency-Key": newKey("claim") } }),
  summary: (id) => call("GET", `/v1/games/${id}`),
  view: (id, token) => call("GET", `/v1/games/${id}/view`, { token }),
  act: (id, token, action) => call("POST", `/v1/games/${id}/actions`, { token, body: { action },
    headers: { "Idempotency-Key": newKey("act") } }),
  events: (id, token, after = 0) => call("GET", `/v1/games/${id}/events?after=${after}`, { token }),
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
  // Words for a game as this seat (token) or a spectator (null) may see it: seat labels and
  // the result always; `{actions: true, version}` the seat's legal actions at that version,
  // `{at}` after the end every hand revealed at that version.
  words: (id, token, ask = {}) => call("POST", "/web/api/words", { token, body: { game_id: id, ...ask } }),
  // The events in (after, until] in words, as this seat may see them; the server answers a
  // page at a time (events_until: where it stopped).
  eventWords: async (id, token, after, until) => {
    const out = [];
    while (after < until) {
      const page = await call("POST", "/web/api/words", { token, body: { game_id: id, after, until } });
      out.push(...page.events);
      if (page.events_until <= after) break;
      after = page.events_until;
    }
    return out;
  },
  glossary: (type) => call("GET", `/web/api/glossary/${encodeURIComponent(type)}`),
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

export function gameIdFromPath() {
  const m = location.pathname.match(/\/web\/games\/([^/]+)/);
  return m ? decodeURIComponent(m[1]) : null;
}

export function seatLabel(seats, seat, viewer) {
  if (seat === null || seat === undefined) return "nobody";
  const info = (seats || [])[seat] || {};
  let label = info.kind === "player" && info.name ? info.name : info.kind === "bot" ? `Bot ${seat}` : `Seat ${seat}`;
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
