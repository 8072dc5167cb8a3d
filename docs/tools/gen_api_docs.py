"""Write docs/openapi.json and docs/api.md from the service's OpenAPI document.

Run `python -m docs.tools.gen_api_docs` after changing the API; a test fails while they are stale.
"""

from __future__ import annotations

import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def openapi() -> dict:
    from service.app import create_app

    app = create_app({"RATE_LIMIT": None, "REDIS_URL": None})
    return app.test_client().get("/openapi.json").json


STATUS_MEANING = {"422": "invalid fields (the message names them)", "default": "any other error, in the error envelope",
                  "400": "malformed body", "401": "no or unknown token", "404": "not found"}


def _schema_name(schema: dict) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[1]
    if schema.get("type") == "array" and "items" in schema:
        return f"array of {_schema_name(schema['items'])}"
    return schema.get("type", "object")


def _fields(schema: dict, components: dict) -> list[str]:
    if "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[1]]
    required = set(schema.get("required", []))
    rows = []
    for name, prop in schema.get("properties", {}).items():
        kind = _schema_name(prop) if "oneOf" not in prop else "one of " + ", ".join(
            _schema_name(o) for o in prop["oneOf"])
        description = prop.get("description", "")
        rows.append(f"| `{name}` | {kind} | {'yes' if name in required else ''} | {description} |")
    return rows


def markdown(spec: dict) -> str:
    components = spec.get("components", {}).get("schemas", {})
    lines = [f"# {spec['info']['title']} — API reference ({spec['info']['version']})", "",
             "Generated from the service's OpenAPI document (`/openapi.json`, also saved as",
             "[openapi.json](openapi.json)) by `python -m docs.tools.gen_api_docs`. Interactive docs:",
             "`/docs` (ReDoc) and `/swagger` on a running service.", "",
             spec["info"].get("description", ""), ""]
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            if method not in ("get", "post", "put", "delete", "patch"):
                continue
            lines += [f"## `{method.upper()} {path}`", "", op.get("summary", ""), ""]
            if op.get("description"):
                lines += [op["description"], ""]
            if op.get("security"):
                lines += ["Authentication: `Authorization: Bearer <seat token>`.", ""]
            params = [p for p in op.get("parameters", []) if p.get("in") != "path"]
            if params:
                lines += ["| parameter | in | required | description |", "|---|---|---|---|"]
                for p in params:
                    lines.append(f"| `{p['name']}` | {p['in']} | {'yes' if p.get('required') else ''} | "
                                 f"{p.get('description', p.get('schema', {}).get('description', ''))} |")
                lines.append("")
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body:
                lines += [f"Request body ({_schema_name(body)}):", "", "| field | type | required | description |",
                          "|---|---|---|---|"] + _fields(body, components) + [""]
            lines += ["| status | meaning |", "|---|---|"]
            for status, response in op.get("responses", {}).items():
                lines.append(f"| {status} | {response.get('description') or STATUS_MEANING.get(status, '')} |")
            lines.append("")
    lines += ["## Actions of each game", "",
              "The `action` of `POST /v1/games/{game_id}/actions` is one of these (see each game's docs",
              "for when each is legal; a seat's `legal_actions` lists the ones it may post now).", ""]
    for name, schema in sorted(components.items()):
        if name.endswith("Action") and name != "Action":
            lines += [f"### {name}", "", "| field | type | required | description |", "|---|---|---|---|"]
            lines += _fields(schema, components) + [""]
    return "\n".join(lines).rstrip() + "\n"


def main() -> None:
    spec = openapi()
    with open(os.path.join(ROOT, "docs", "openapi.json"), "w") as handle:
        json.dump(spec, handle, indent=2, sort_keys=True)
        handle.write("\n")
    with open(os.path.join(ROOT, "docs", "api.md"), "w") as handle:
        handle.write(markdown(spec))


if __name__ == "__main__":
    main()
