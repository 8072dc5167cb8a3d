"""The machine side of the CLI (click): help with descriptions and defaults, --json output,
`verify` telling a file from a game id, and the documented exit codes (service/cli.py)."""

import json

import pytest

import web_kit
from service import cli


def run(capsys, *args) -> tuple[int, str, str]:
    try:
        cli.main(list(args))
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def server():
    live = web_kit.LiveServer().start()
    yield live
    live.stop()


def test_help_describes_every_command_with_its_defaults(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "Exit codes" in out
    for command in ("serve", "worker", "games", "view", "replay", "export", "verify", "play", "demo"):
        assert command in out
    code, out, _ = run(capsys, "play", "--help")
    assert code == 0 and "[default: 3;" in out and "[default: heuristic]" in out
    code, out, _ = run(capsys, "verify", "--help")
    assert code == 0 and "[default: http://" in out and "GAME_OR_FILE" in out


def test_verify_tells_a_missing_file_from_a_game_id(capsys, tmp_path):
    code, _, err = run(capsys, "verify", str(tmp_path / "missing-file.ndjson"), "--api", "http://127.0.0.1:9")
    assert code == cli.EXIT_USAGE and "no such file" in err
    code, _, err = run(capsys, "verify", "0123456789abcdef", "--api", "http://127.0.0.1:9")
    assert code == cli.EXIT_UNREACHABLE and "cannot reach the API" in err
    (tmp_path / "junk.ndjson").write_text("not json\n")
    code, _, err = run(capsys, "verify", str(tmp_path / "junk.ndjson"))
    assert code == cli.EXIT_USAGE and "not an export" in err
    code, _, err = run(capsys, "verify", str(tmp_path / "junk.ndjson"), "--receipt", "12:nothex")
    assert code == cli.EXIT_USAGE and "VERSION:HEAD" in err


def test_json_output_and_the_api_error_exit_code(capsys, server):
    http = server.app.test_client()
    game = http.post("/v1/games", json={"type": "speculation", "seats": [{}] * 3}).json["game_id"]
    code, out, _ = run(capsys, "games", "--json", "--api", server.url)
    assert code == 0 and game in [g["game_id"] for g in json.loads(out)["games"]]
    code, out, _ = run(capsys, "games", "--status", "open", "--api", server.url)
    assert code == 0 and game in out
    code, out, _ = run(capsys, "verify", game, "--api", server.url)
    assert code == 0 and json.loads(out)["events_checked"] == 1
    code, _, err = run(capsys, "verify", "fedcba9876543210", "--api", server.url)
    assert code == cli.EXIT_API_ERROR and "404 not_found" in err
    code, _, err = run(capsys, "games", "--status", "nope")
    assert code == cli.EXIT_USAGE and "nope" in err
