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
PAYLOADS = ("The payloads are typed per game: a view is one of {views} (by its `type`), each with its game's "
            "`…State` and `…LegalAction` (an action or its template, integer fields possibly an `IntRange`); an "
            "event is one of the `…Event` schemas (by its `type`), its `data` closed. Every union is a "
            "strict `oneOf`: a valid payload matches exactly one branch. The schemas are in "
            "[openapi.json](openapi.json).")


def payloads(components: dict) -> str:
    """The typed payloads' paragraph: each hosted game's view schema, in the lobby's order
    (projections/registry.py), as the document's View union names it."""
    from projections.registry import game_types

    mapping = components["View"]["discriminator"]["mapping"]
    missing = [t.name for t in game_types() if t.name not in mapping]
    if missing:
        raise RuntimeError(f"no view schema in the OpenAPI document for {', '.join(missing)}")
    return PAYLOADS.format(views=", ".join(f"`{mapping[t.name].rsplit('/', 1)[1]}`" for t in game_types()))


def _schema_name(schema: dict) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[1]
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if isinstance(schema.get("type"), list):
        return " or ".join(schema["type"])
    if "oneOf" in schema:
        return " or ".join(_schema_name(o) for o in schema["oneOf"])
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


def _nested_objects(schema: dict, components: dict, seen=None) -> list[str]:
    """The object components a request body's fields refer to (a seat, its budget), in order,
    each once: their fields get a table of their own (unions such as Action do not)."""
    seen = [] if seen is None else seen
    if "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[1]]
    for prop in schema.get("properties", {}).values():
        target = prop.get("items", {}) if prop.get("type") == "array" else prop
        name = target.get("$ref", "").rsplit("/", 1)[-1]
        if name and name not in seen and "properties" in components.get(name, {}):
            seen.append(name)
            _nested_objects(components[name], components, seen)
    return seen


def markdown(spec: dict) -> str:
    components = spec.get("components", {}).get("schemas", {})
    lines = [f"# {spec['info']['title']} — API reference ({spec['info']['version']})", "",
             "Generated from the service's OpenAPI document (`/openapi.json`, also saved as",
             "[openapi.json](openapi.json)) by `python -m docs.tools.gen_api_docs`. Interactive docs:",
             "`/docs` on a running service (Swagger UI, its assets served by the service: no CDN).", "",
             spec["info"].get("description", ""), ""]
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            if method not in ("get", "post", "put", "delete", "patch"):
                continue
            lines += [f"## `{method.upper()} {path}`", "", op.get("summary", ""), ""]
            if op.get("description"):
                lines += [op["description"], ""]
            if op.get("security"):
                optional = {} in op["security"]
                lines += ["Authentication: `Authorization: Bearer <seat token>`" +
                          (" (optional: without it, the spectator's)." if optional else "."), ""]
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
                for name in _nested_objects(body, components):
                    lines += [f"{name}:", "", "| field | type | required | description |", "|---|---|---|---|"]
                    lines += _fields(components[name], components) + [""]
            if op.get("operationId"):
                lines += [f"operationId: `{op['operationId']}`", ""]
            lines += ["| status | meaning |", "|---|---|"]
            for status, response in sorted(op.get("responses", {}).items()):
                retry = " (with `Retry-After`)" if "Retry-After" in response.get("headers", {}) else ""
                lines.append(f"| {status} | {response.get('description') or STATUS_MEANING.get(status, '')}{retry} |")
            lines.append("")
    lines += ["## Actions of each game", "",
              "The `action` of `POST /v1/games/{game_id}/actions` is an `Action`: one of these closed",
              "schemas (no other field allowed), discriminated by `type` (see each game's docs for when",
              "each is legal; a seat's `legal_actions` lists the ones it may post now). A shape two games",
              "share is one schema (`PassAction`); a type with two shapes (`buy`) is a union of both.", ""]
    for name, schema in sorted(components.items()):
        if name.endswith("Action") and "properties" in schema:
            lines += [f"### {name}", "", schema.get("description", ""), "",
                      "| field | type | required | description |", "|---|---|---|---|"]
            lines += _fields(schema, components) + [""]
    lines += ["## Typed payloads", "", payloads(components), ""]
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
