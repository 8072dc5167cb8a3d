"""Docs that are generated must not go stale, and every game has its rules page."""

import json
import os

from docs.tools.gen_api_docs import ROOT, markdown, openapi
from projections.registry import all_games


def test_api_reference_matches_the_openapi_document(monkeypatch):
    from projections import registry

    builtin = {k: v for k, v in registry.all_games().items() if k != "secret-duel"}
    monkeypatch.setattr(registry, "_GAMES", builtin)  # the test-only game is not in the docs
    spec = openapi()
    with open(os.path.join(ROOT, "docs", "openapi.json")) as handle:
        assert json.load(handle) == json.loads(json.dumps(spec)), "run `python -m docs.tools.gen_api_docs`"
    with open(os.path.join(ROOT, "docs", "api.md")) as handle:
        assert handle.read() == markdown(spec), "run `python -m docs.tools.gen_api_docs`"


def test_every_game_has_its_rules_page():
    for name in all_games():
        if name == "secret-duel":
            continue
        path = os.path.join(ROOT, "docs", "games", f"{name}.md")
        assert os.path.exists(path), path


def test_the_settings_table_in_operations_is_current():
    from docs.tools.gen_settings_table import PAGE, render

    with open(PAGE, encoding="utf-8") as f:
        page = f.read()
    assert render(page) == page, "docs/operations.md is stale: python -m docs.tools.gen_settings_table"


def test_bad_settings_stop_the_start_naming_the_variable():
    import pytest

    from service.settings import SettingsError, load

    assert load({"SPECULATION_PORT": "8080"})["PORT"] == 8080
    assert load({"REDIS_URL": "redis://h:1/0"})["REDIS_URL"] == "redis://h:1/0"
    for variable, value in (("SPECULATION_PORT", "80a"), ("SPECULATION_PORT", "70000"),
                            ("SPECULATION_ALLOW_SEED", "maybe"), ("REDIS_URL", "http://x"),
                            ("SPECULATION_STREAM_KEEPALIVE", "nan"), ("SPECULATION_RATE_LIMIT", "10")):
        with pytest.raises(SettingsError, match=variable):
            load({variable: value})


def test_game_docs_are_reachable_from_the_urls_game_types_gives():
    from service.app import create_app

    http = create_app({"RATE_LIMIT": None, "REDIS_URL": None}).test_client()
    for game_type in http.get("/v1/game-types").json["game_types"]:
        if game_type["name"] == "secret-duel":
            continue
        page = http.get(game_type["docs"])
        assert page.status_code == 200 and page.mimetype == "text/markdown", game_type["docs"]
        with open(os.path.join(ROOT, "docs", "games", f"{game_type['name']}.md"), "rb") as handle:
            assert page.data == handle.read()
    assert http.get("/docs/games/no-such-game.md").status_code == 404


def test_the_readme_curl_example_is_the_one_a_real_game_gives():
    from docs.tools.example_curl import readme_with_example

    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    assert readme_with_example(readme) == readme, "README is stale: python -m docs.tools.example_curl --readme"
