// A dispute bundle (speculation-bundle/1, docs/audit.md) checked in the browser, with the same
// named checks as `speculation verify BUNDLE` (projections/audit_verify.py): Ed25519 signatures
// with Web Crypto, the export's hash chain (verify.js), each receipt against the log, the
// creation receipt's seed commitment, each checkpoint's inclusion proof against the signed tree
// head (RFC 9162 §2.1.3.2), the earlier and the caller's known tree heads proved to be prefixes
// of it (§2.1.4.2), and every receipt's promise of inclusion by its include_by. The receipts
// the player's own table kept on this device are checked too: one the log does not hold
// convicts the operator.
import { checkExport, fromHex, hex } from "./verify.js";

export const BUNDLE_FORMAT = "speculation-bundle/1";
const RECEIPT_FORMAT = "speculation-receipt/1";
const STH_FORMAT = "speculation-sth/1";
const GENESIS = "0".repeat(64);
const enc = new TextEncoder();
const subtle = globalThis.crypto && globalThis.crypto.subtle;

// --- canonical JSON (RFC 8785 for objects of strings, integers and null) ---------------------
export function canonical(value) {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
  return "{" + Object.keys(value).sort().map((k) => JSON.stringify(k) + ":" + canonical(value[k])).join(",") + "}";
}

const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

// Strict, as events/signing.py: the alphabet only, no padding, and the one text of its bytes
// (else another text of the same signature would pass for it)
export function unb64url(text) {
  if (typeof text !== "string" || !/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) throw new Error("not base64url without padding");
  const raw = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "==".slice(0, (4 - (text.length % 4)) % 4));
  const bytes = Uint8Array.from(raw, (c) => c.charCodeAt(0));
  if (b64url(bytes) !== text) throw new Error("not the canonical base64url of its bytes");
  return bytes;
}

const sha256 = async (bytes) => new Uint8Array(await subtle.digest("SHA-256", bytes));
function join(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// --- signatures --------------------------------------------------------------------------------
const imported = new Map();
async function publicKey(entry) {
  if (!imported.has(entry.public_key)) {
    imported.set(entry.public_key, subtle.importKey("raw", unb64url(entry.public_key), { name: "Ed25519" }, false, ["verify"]));
  }
  return imported.get(entry.public_key);
}

// null when `obj` is signed by one of `keys` within that key's validity, else why not
export async function signatureProblem(obj, keys) {
  if (!obj || typeof obj !== "object") return "not an object";
  const entry = keys.find((k) => k && k.key_id === obj.key_id);
  if (!entry) return `signed by a key not trusted here (${obj.key_id})`;
  if (entry.algorithm !== "Ed25519") return `key ${entry.key_id}: not Ed25519`;
  let publicRaw;
  try { publicRaw = unb64url(entry.public_key); } catch { return `key ${entry.key_id}: not base64url`; }
  if (hex(await sha256(publicRaw)).slice(0, 16) !== entry.key_id) return `key ${entry.key_id}: its id is not SHA-256 of its public key`;
  const time = obj.time ?? obj.timestamp;
  if (!Number.isInteger(time) || time < entry.valid_from || (entry.valid_until !== null && entry.valid_until !== undefined && time > entry.valid_until)) {
    return `signed at ${time}, outside key ${entry.key_id}'s validity`;
  }
  const { signature, ...signed } = obj;
  if (typeof signature !== "string") return "no signature";
  let raw;
  try { raw = unb64url(signature); } catch (err) { return `the signature is ${err.message}`; }
  try {
    const ok = await subtle.verify("Ed25519", await publicKey(entry), raw, enc.encode(canonical(signed)));
    return ok ? null : "the signature does not verify";
  } catch (err) {
    return `the signature cannot be checked here (${err.message})`;
  }
}

// --- RFC 9162 Merkle trees ------------------------------------------------------------------
const lsb = (n) => n % 2 === 1;
const half = (n) => Math.floor(n / 2);   // not >>: sizes pass 2^31
function powerOfTwo(n) {
  while (n > 1 && n % 2 === 0) n /= 2;
  return n === 1;
}
const node = (left, right) => sha256(join(Uint8Array.of(1), left, right));
export const leafHash = (bytes) => sha256(join(Uint8Array.of(0), bytes));

// §2.1.3.2
export async function verifyInclusion(leaf, index, size, proof, root) {
  if (index >= size) return false;
  let fn = index, sn = size - 1, r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      r = await node(p, r);
      if (!lsb(fn)) while (!lsb(fn) && fn !== 0) { fn = half(fn); sn = half(sn); }
    } else {
      r = await node(r, p);
    }
    fn = half(fn); sn = half(sn);
  }
  return sn === 0 && same(r, root);
}

// §2.1.4.2, for 0 < first < second; as events/merkle.py: equal sizes hold with an empty proof
// and equal roots, a proof from the empty tree is not defined and fails
export async function verifyConsistency(first, second, firstRoot, secondRoot, proof) {
  if (first > second) return false;
  if (first === second) return proof.length === 0 && same(firstRoot, secondRoot);
  if (first === 0) return false;
  if (!proof.length) return false;
  const path = powerOfTwo(first) ? [firstRoot, ...proof] : [...proof];
  let fn = first - 1, sn = second - 1;
  while (lsb(fn)) { fn = half(fn); sn = half(sn); }
  let fr = path[0], sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      fr = await node(c, fr);
      sr = await node(c, sr);
      if (!lsb(fn)) while (!lsb(fn) && fn !== 0) { fn = half(fn); sn = half(sn); }
    } else {
      sr = await node(sr, c);
    }
    fn = half(fn); sn = half(sn);
  }
  return same(fr, firstRoot) && same(sr, secondRoot) && sn === 0;
}

// --- the checks --------------------------------------------------------------------------------
const span = (r) => (r.first_version === undefined || r.first_version === r.version ? `version ${r.version}` : `versions ${r.first_version}-${r.version}`);
const check = (name, ok, message, failure = "") => ({ name, ok, message, failure: ok ? "" : failure || name });
const hexBytes = (value) => {
  if (typeof value !== "string" || !/^[0-9a-f]{64}$/.test(value)) throw new Error("not 32 bytes of lower-case hex");
  return fromHex(value);
};

function shape(bundle) {
  if (!bundle || typeof bundle !== "object" || Array.isArray(bundle)) return "the bundle is not a JSON object";
  if (bundle.format !== BUNDLE_FORMAT) return `format: not "${BUNDLE_FORMAT}"`;
  if (typeof bundle.game !== "string" || !bundle.game) return "game: missing";
  for (const member of ["export", "receipts", "checkpoints", "keys"]) if (!Array.isArray(bundle[member])) return `${member}: missing (a list)`;
  if (bundle.tree_head !== null && typeof bundle.tree_head !== "object") return "tree_head: a signed tree head or null";
  return "";
}

// The log as the export shows it: version -> hash (a hidden event's hash as its successor shows it)
function readExport(records) {
  const header = records[0] || {};
  const rows = records.slice(1);
  const hashes = new Map();
  let last = 0, created = null;
  if (header.complete) {
    rows.forEach((row, i) => {
      hashes.set(i + 1, row.hash);
      if (i === 0) { try { const b = JSON.parse(row.body); if (b.t === "game.created") created = b.d.commitment; } catch { /* the chain check names it */ } }
    });
    last = rows.length;
  } else {
    for (const row of rows) {
      hashes.set(row.version, row.hash);
      if (row.version > 1 && !hashes.has(row.version - 1)) hashes.set(row.version - 1, row.prev_hash);
      if (row.version === 1 && row.type === "game.created") created = (row.data || {}).commitment;
      last = Math.max(last, row.version);
    }
    if (Number.isInteger(header.version)) last = Math.max(last, header.version);
  }
  return { header, rows, complete: Boolean(header.complete), last, hashes, created };
}

async function checkLog(game, log) {
  const { header, rows } = log;
  if (header.game_id !== game) return check("export", false, `the export is of game ${header.game_id}, not ${game}`);
  if (log.complete) {
    const text = [header, ...rows].map((r) => JSON.stringify(r)).join("\n");
    const report = await checkExport(text);
    const bad = report.checks.filter((c) => !c.ok);
    return bad.length ? check("export", false, "the complete export does not hold: " + bad.map((c) => `${c.name}: ${c.detail}`).join("; "))
      : check("export", true, `the complete export holds: ${rows.length} events chain from 64 zeros, every nonce from the revealed seed (re-running the rules is \`speculation verify\`'s)`);
  }
  let before = null;
  for (const row of rows) {
    if (before && row.version <= before.version) return check("export", false, "the export's events are not in rising order of version");
    if (row.version === 1 && row.prev_hash !== GENESIS) return check("export", false, "event 1 does not chain from 64 zeros");
    if (before && before.version === row.version - 1 && before.hash !== row.prev_hash) return check("export", false, `event ${row.version}: its prev_hash is not event ${before.version}'s hash`);
    before = row;
  }
  return check("export", true, `a live game's export as this viewer sees it: ${rows.length} of ${log.last} events, each linked to the hash before it (the rules re-run once the game has ended)`);
}

async function checkReceiptSignatures(name, receipts, keys, whose) {
  const good = [], bad = [];
  for (const r of receipts) {
    let why = !r || r.format !== RECEIPT_FORMAT ? `not a ${RECEIPT_FORMAT}` : await signatureProblem(r, keys);
    if (!why && !["first_version", "version", "time", "include_by"].every((k) => Number.isInteger(r[k]))) why = "versions and times must be integers";
    if (why) bad.push(`${r && r.version !== undefined ? span(r) : "a receipt"}: ${why}`);
    else good.push(r);
  }
  if (bad.length) return [check(name, false, `${bad.length} of ${receipts.length} ${whose} do not verify: ${bad.slice(0, 5).join("; ")}`), good];
  const ids = [...new Set(good.map((r) => r.key_id))].sort().join(", ") || "none";
  return [check(name, true, `${good.length} ${whose}, each signed by a trusted key (${ids})`), good];
}

function checkReceiptsInLog(receipts, game, log) {
  const missing = [];
  let unknown = 0;
  for (const r of receipts) {
    const where = `${r.whose} receipt for ${span(r)}`;
    if (r.game !== game) missing.push(`${where}: of game ${r.game}`);
    else if (r.version > log.last) missing.push(`${where}: the log ends at version ${log.last}`);
    else if (!log.hashes.has(r.version)) unknown++;
    else if (log.hashes.get(r.version) !== r.head) missing.push(`${where}: the log's hash at version ${r.version} is not the receipt's head`);
  }
  if (missing.length) return check("receipts_in_log", false, "the service signed receipts for a log it no longer holds (this convicts the operator): " + missing.slice(0, 5).join("; "), "receipt_not_in_log");
  return check("receipts_in_log", true, `${receipts.length - unknown} signed receipt(s) end on the log's own hash at their version` + (unknown ? `; ${unknown} not checkable from this live export` : ""));
}

async function checkSeedCommitment(receipts, log) {
  const created = receipts.find((r) => r.first_version === 1 && "seed_commitment" in r);
  if (!created) return check("seed_commitment", false, "no signed creation receipt (version 1 with seed_commitment)");
  const signed = created.seed_commitment;
  const wrong = [];
  if (log.header.commitment !== signed) wrong.push("the export's header");
  if (log.created !== signed) wrong.push("the game.created event");
  if (log.complete) {
    const seed = log.header.seed;
    if (!/^[0-9a-f]{64}$/.test(seed || "") || hex(await sha256(fromHex(seed))) !== signed) wrong.push("SHA-256 of the export's seed");
  }
  return wrong.length ? check("seed_commitment", false, `the commitment signed when the game was created differs from ${wrong.join(", ")}`)
    : check("seed_commitment", true, "the commitment signed at creation is the export's" + (log.complete ? " and SHA-256 of its seed" : " (the seed is revealed at the end)"));
}

function head(sth) {
  if (!sth || sth.format !== STH_FORMAT) throw new Error(`not a ${STH_FORMAT}`);
  if (!Number.isInteger(sth.tree_size) || sth.tree_size < 0 || !Number.isInteger(sth.timestamp)) throw new Error("tree_size and timestamp must be integers");
  return { size: sth.tree_size, root: hexBytes(sth.root_hash), timestamp: sth.timestamp };
}

async function checkCheckpoints(checkpoints, game, top, log) {
  const good = [], bad = [];
  for (const cp of checkpoints) {
    try {
      const leaf = cp.leaf;
      if (!leaf || Object.keys(leaf).sort().join() !== "game,head,version") throw new Error("leaf: {game, head, version}");
      const where = `checkpoint ${cp.index} (version ${leaf.version})`;
      const proof = (cp.inclusion || []).map(hexBytes);
      if (leaf.game !== game) bad.push(`${where}: of game ${leaf.game}`);
      else if (!Number.isInteger(cp.index) || !(await verifyInclusion(await leafHash(enc.encode(canonical(leaf))), cp.index, top.size, proof, top.root))) bad.push(`${where}: not included in the tree head (the proof does not reach its root)`);
      else if (leaf.version > log.last) bad.push(`${where}: the log ends at version ${log.last}`);
      else if (log.hashes.has(leaf.version) && log.hashes.get(leaf.version) !== leaf.head) bad.push(`${where}: its head is not the log's hash at that version`);
      else good.push(cp);
    } catch (err) { bad.push(`a checkpoint: ${err.message}`); }
  }
  if (bad.length) return [check("checkpoints", false, `${bad.length} of ${checkpoints.length} checkpoints fail: ${bad.slice(0, 5).join("; ")}`), good];
  return [check("checkpoints", true, `${good.length} checkpoint(s) of the game included in the tree head of size ${top.size}, each head the log's hash at its version`), good];
}

async function checkConsistency(bundle, top, sths, keys, name, whose) {
  const proofs = bundle.consistency || {};
  const proved = [], forks = [], other = [];
  for (const sth of sths) {
    let earlier;
    try { earlier = head(sth); } catch (err) { other.push(`a tree head: ${err.message}`); continue; }
    const why = await signatureProblem(sth, keys);
    if (why) { other.push(`the tree head of size ${earlier.size}: ${why}`); continue; }
    if (earlier.size > top.size) { other.push(`the tree head of size ${earlier.size} is later than the bundle's (${top.size}): fetch the bundle again`); continue; }
    let ok;
    try {
      ok = earlier.size === top.size ? same(earlier.root, top.root)
        : Array.isArray(proofs[String(earlier.size)]) && await verifyConsistency(earlier.size, top.size, earlier.root, top.root, proofs[String(earlier.size)].map(hexBytes));
    } catch { ok = false; }
    if (ok) proved.push(earlier); else forks.push(`the tree head of size ${earlier.size} (signed at ${earlier.timestamp})`);
  }
  if (forks.length) return [check(name, false, `${whose} not proved to be prefixes of the bundle's tree head (a fork: the service showed different logs): ${forks.slice(0, 5).join("; ")}`, "fork"), proved];
  if (other.length) return [check(name, false, `${whose}: ${other.slice(0, 5).join("; ")}`), proved];
  return [check(name, true, sths.length ? `${proved.length} of ${whose}, each a prefix of the bundle's tree head of size ${top.size}` : `none of ${whose} to check`), proved];
}

function checkPromises(receipts, checkpoints, heads, top) {
  let kept = 0, later = 0;
  const broken = [];
  for (const r of receipts) {
    const fits = checkpoints.filter((cp) => cp.leaf.version >= r.version).map((cp) => cp.index);
    if (fits.some((index) => heads.some((h) => h.size > index && h.timestamp <= r.include_by))) kept++;
    else if (top.timestamp > r.include_by) broken.push(`${r.whose} receipt for ${span(r)} (include_by ${r.include_by})`);
    else later++;
  }
  if (broken.length) return check("inclusion_promises", false, `no checkpoint at or after the receipt's version was in a tree head signed by its include_by: ${broken.slice(0, 5).join("; ")}`, "inclusion_promise_broken");
  return check("inclusion_promises", true, `${kept} receipt(s) checkpointed in a tree head by their include_by` + (later ? `; ${later} not due yet` : ""));
}

// The report: {ok, game, seat, trusted: {source, key_ids}, checks: [{name, ok, message, failure}]}
export async function verifyBundle(bundle, { keys = null, knownHeads = [], kept = [] } = {}) {
  const given = Array.isArray(keys);
  const trusted = (given ? keys : (bundle && bundle.keys) || []).filter((k) => k && typeof k === "object");
  const ids = trusted.map((k) => k.key_id);
  const checks = [];
  const report = () => ({ ok: checks.length > 0 && checks.every((c) => c.ok), game: bundle && bundle.game, seat: bundle && bundle.seat,
    trusted: { source: given ? "given" : "bundle", key_ids: ids }, checks });
  const problem = shape(bundle);
  if (problem) { checks.push(check("format", false, problem)); return report(); }
  if (!subtle) {
    checks.push(check("format", false, "this page has no Web Crypto (it is given only to https and localhost pages): check the bundle with `speculation verify BUNDLE` instead"));
    return report();
  }
  const game = bundle.game;
  checks.push(check("format", true, `a ${BUNDLE_FORMAT} of game ${game}, ${Number.isInteger(bundle.seat) ? `seat ${bundle.seat}` : "as a spectator"}`));
  checks.push(check("keys", ids.length > 0, !ids.length ? "no key to trust" : given ? `trusted the ${ids.length} key(s) of the file given: ${ids.join(", ")}`
    : `trusted the bundle's own ${ids.length} key(s): ${ids.join(", ")}; they prove nothing against the service that sent them (load keys kept earlier)`));
  let top = null, topSigned = false;
  try {
    if (!bundle.tree_head) throw new Error("none: the log had no signed tree head when the bundle was made");
    top = head(bundle.tree_head);
    const why = await signatureProblem(bundle.tree_head, trusted);
    topSigned = !why;
    checks.push(check("tree_head_signature", topSigned, why || `the tree head of size ${top.size} is signed by ${bundle.tree_head.key_id}`));
  } catch (err) { checks.push(check("tree_head_signature", false, `tree_head: ${err.message}`)); }
  const [signed, good] = await checkReceiptSignatures("receipt_signatures", bundle.receipts, trusted, "receipts in the bundle");
  checks.push(signed);
  const receipts = good.map((r) => ({ ...r, whose: "the bundle's" }));
  const mine = kept.filter((r) => r && r.game === game);
  if (mine.length) {
    const [signedKept, goodKept] = await checkReceiptSignatures("kept_receipt_signatures", mine, trusted, "receipts kept on this device");
    checks.push(signedKept);
    const signedByBundle = new Set(receipts.map((r) => r.signature));   // a kept copy of the bundle's is the same evidence
    receipts.push(...goodKept.filter((r) => !signedByBundle.has(r.signature)).map((r) => ({ ...r, whose: "a kept" })));
  }
  let log = null;
  try {
    if (!bundle.export.length || typeof bundle.export[0] !== "object") throw new Error("a header and events");
    log = readExport(bundle.export);
  } catch (err) { checks.push(check("export", false, `malformed: ${err.message}`)); }
  if (log) {
    checks.push(await checkLog(game, log));
    checks.push(checkReceiptsInLog(receipts, game, log));
    checks.push(await checkSeedCommitment(receipts, log));
  }
  if (top && log) {
    const [cps, included] = await checkCheckpoints(bundle.checkpoints, game, top, log);
    checks.push(cps);
    const [cons, proved] = await checkConsistency(bundle, top, (bundle.tree_heads || []), trusted, "consistency", "the bundle's earlier tree heads");
    checks.push(cons);
    if (knownHeads.length) {
      const [known, provedKnown] = await checkConsistency(bundle, top, knownHeads, trusted, "known_heads", "the tree heads known here");
      checks.push(known);
      proved.push(...provedKnown);
    }
    checks.push(checkPromises(receipts, included, (topSigned ? [top] : []).concat(proved), top));
  }
  return report();
}
