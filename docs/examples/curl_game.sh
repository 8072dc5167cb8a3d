#!/usr/bin/env bash
# Play a whole game through the API with nothing but curl (python3 only reads the JSON).
# You hold seat 0 and always play the first legal action (a template's range takes its
# minimum); bots hold the other seats.
# Usage: docs/examples/curl_game.sh [TYPE] [PLAYERS] [BOT_LEVEL] [OPTIONS_JSON]
# (OPTIONS_JSON such as '{"deals":2}' for a short speculation session; default: the game's own)
set -euo pipefail
API=${API:-http://127.0.0.1:5000}
TYPE=${1:-speculation}
PLAYERS=${2:-3}
LEVEL=${3:-heuristic}
OPTIONS=${4:-\{\}}
get() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

SEATS="[{}$(printf ',{"bot":"%s"}' $(yes "$LEVEL" | head -n $((PLAYERS - 1))))]"
# With an Idempotency-Key a create or a claim is safe to resend: a retry (curl --retry, on a
# 503 or a 500 whose reply was lost) gets the first answer back, the same game and the same
# token, never a second game or a seat nobody holds. One fresh key per run and request.
RUN=$(python3 -c 'import uuid; print(uuid.uuid4())')
GAME=$(curl -sf --retry 3 -X POST "$API/v1/games" -H 'Content-Type: application/json' \
  -H "Idempotency-Key: $RUN-create" -d "{\"type\":\"$TYPE\",\"options\":$OPTIONS,\"seats\":$SEATS}" | get 'd["game_id"]')
echo "game $GAME ($TYPE, $PLAYERS seats, you hold seat 0)"
TOKEN=$(curl -sf --retry 3 -X POST "$API/v1/games/$GAME/seats/0" -H 'Content-Type: application/json' \
  -H "Idempotency-Key: $RUN-seat-0" -d '{"name":"curl"}' | get 'd["token"]')
AUTH="Authorization: Bearer $TOKEN"

# One python3 per view reads what the loop needs: status, version, whether seat 0 is to act,
# its decision and the first legal action (a template's range takes its minimum).
FIELDS='d["status"], d["version"], 0 in d["to_act"], d["decision"],
  json.dumps({k: (v["min"] if isinstance(v, dict) else v) for k, v in (d["legal_actions"] or [{}])[0].items()},
             separators=(",", ":"))'
n=0
while true; do
  read -r STATUS VERSION MINE DECISION ACTION <<< "$(curl -sf "$API/v1/games/$GAME/view" -H "$AUTH" |
    get "' '.join(map(str, ($FIELDS)))")"
  [ "$STATUS" = "active" ] || break
  if [ "$MINE" = "True" ]; then
    n=$((n + 1))
    # bound to the version and to our decision (409 stale_decision once that decision is over)
    STATUS_CODE=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$API/v1/games/$GAME/actions" -H "$AUTH" \
      -H "Idempotency-Key: $RUN-action-$n" -H 'Content-Type: application/json' \
      -d "{\"action\":$ACTION,\"expected_version\":$VERSION,\"decision\":$DECISION}")
    # 409: a bot moved first (simultaneous choices); read the view again and decide anew.
    case "$STATUS_CODE" in 200|409) ;; *) echo "action refused: HTTP $STATUS_CODE" >&2; exit 1 ;; esac
  else
    # Not our turn: long-poll until the bots move the game on.
    curl -sf "$API/v1/games/$GAME/view?wait=10&after_version=$VERSION" -H "$AUTH" >/dev/null
  fi
done
echo "the rules ended the game after $n actions of ours; waiting for the scoring job"
for _ in $(seq 100); do
  SUMMARY=$(curl -sf "$API/v1/games/$GAME")
  [ "$(echo "$SUMMARY" | get 'd["status"]')" = "scored" ] && break
  sleep 0.2
done
echo "status: $(echo "$SUMMARY" | get 'd["status"]')   result: $(echo "$SUMMARY" | get 'json.dumps(d.get("result"))')"
echo "verify: $(curl -sf "$API/v1/games/$GAME/verify")"
