// The in-browser check of a complete export, independent of the server: the hash chain over
// the stored bytes (hash = SHA-256(prev_hash || body), from 64 zeros), the version sequence,
// each event's nonce (HMAC-SHA256(seed, "nonce/<version>"), first 32 hex digits) and the
// seed against its commitment (SHA-256 of the seed's bytes). Web Crypto where the page has
// it (secure contexts), else the vendored SHA-256.
import { sha256 as pureSha256, hmacSha256 as pureHmac } from "./sha256.js";

const GENESIS = "0".repeat(64);
const enc = new TextEncoder();

export const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
export function fromHex(text) {
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.substr(i * 2, 2), 16);
  return out;
}

export function engine(forcePure = false) {
  const subtle = !forcePure && globalThis.crypto && globalThis.crypto.subtle;
  if (subtle) {
    return {
      name: "Web Crypto (the browser's SHA-256)",
      sha256: async (bytes) => new Uint8Array(await subtle.digest("SHA-256", bytes)),
      hmac: async (key, msg) => {
        const k = await subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
        return new Uint8Array(await subtle.sign("HMAC", k, msg));
      },
    };
  }
  return { name: "the page's own SHA-256 (no Web Crypto here)", sha256: async (b) => pureSha256(b), hmac: async (k, m) => pureHmac(k, m) };
}

function concat(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a); out.set(b, a.length);
  return out;
}

// Returns {complete, ok, engine, checks: [{name, ok, detail}], events}
export async function checkExport(text, { forcePure = false } = {}) {
  const eng = engine(forcePure);
  const lines = text.split("\n").filter((l) => l.trim());
  const checks = [];
  const add = (name, ok, detail) => checks.push({ name, ok, detail });
  let header;
  try { header = JSON.parse(lines[0]); } catch { add("format", false, "the export's first line is not JSON"); return { complete: false, ok: false, checks, engine: eng.name }; }
  if (!header.complete) {
    return { complete: false, ok: null, engine: eng.name, checks: [{ name: "live", ok: null,
      detail: "The game has not ended: its export is redacted, so only the server's verify is available yet." }] };
  }
  const rows = lines.slice(1).map((l) => JSON.parse(l));
  let prev = GENESIS;
  let chainOk = true, seqOk = true, nonceOk = true;
  let firstBad = null;
  const bodies = [];
  const seedBytes = /^[0-9a-f]{64}$/.test(header.seed || "") ? fromHex(header.seed) : null;
  for (let i = 0; i < rows.length; i++) {
    const { body, hash } = rows[i];
    const digest = hex(await eng.sha256(concat(enc.encode(prev), enc.encode(body))));
    if (digest !== hash && chainOk) { chainOk = false; firstBad = firstBad ?? i + 1; add("chain", false, `event ${i + 1}: its hash does not match SHA-256(previous hash ‖ body)`); }
    let parsed = null;
    try { parsed = JSON.parse(body); } catch { if (seqOk) { seqOk = false; add("format", false, `event ${i + 1}: the body is not JSON`); } }
    if (parsed) {
      bodies.push(parsed);
      if (parsed.v !== i + 1 && seqOk) { seqOk = false; firstBad = firstBad ?? i + 1; add("sequence", false, `event ${i + 1} carries version ${parsed.v}`); }
      if (seedBytes && parsed.n !== undefined && nonceOk) {
        const nonce = hex(await eng.hmac(seedBytes, enc.encode(`nonce/${parsed.v}`))).slice(0, 32);
        if (nonce !== parsed.n) { nonceOk = false; firstBad = firstBad ?? i + 1; add("nonce", false, `event ${i + 1}: the nonce was not derived from the revealed seed`); }
      }
    }
    prev = hash;
  }
  if (chainOk) add("chain", true, `${rows.length} events chain from 64 zeros: each hash = SHA-256(previous hash ‖ stored body)`);
  if (seqOk) add("sequence", true, `versions run 1 to ${rows.length} without a gap`);
  add("length", rows.length === header.version, `the export holds ${rows.length} events; its header says ${header.version}`);
  if (!seedBytes) add("seed", false, "the export carries no valid seed (64 hex digits)");
  else {
    const commitment = hex(await eng.sha256(seedBytes));
    const created = bodies[0] && bodies[0].t === "game.created" ? bodies[0].d.commitment : null;
    add("commitment", commitment === header.commitment && commitment === created,
      commitment === created ? "SHA-256(seed) equals the commitment published when the game was created"
        : "SHA-256(seed) differs from the commitment published when the game was created");
    const scored = bodies.filter((b) => b.t === "game.scored").pop();
    if (scored) add("revealed seed", scored.d.seed === header.seed, "the seed revealed in the log's game.scored event is the export's seed");
    if (nonceOk) add("nonces", true, "every event's nonce is HMAC-SHA256(seed, \"nonce/<version>\"): the salts were fixed by the committed seed");
  }
  const ok = checks.every((c) => c.ok);
  return { complete: true, ok, engine: eng.name, checks, head: prev, firstBad,
    note: "The page checks the log's integrity and the seed; re-running the rules on every action is the server's verify (and `speculation verify FILE`)." };
}
