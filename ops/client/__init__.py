"""The Python client generated from the service's OpenAPI document (`make client`).

    python -m ops.client [--out client]   # writes client/openapi.json, client/speculation-client/
                                          # (the generated package) and client/dist/*.whl

The generator is openapi-python-client, a maintained generator of typed clients (attrs
models, httpx); its configuration is ops/client/config.yaml. The generated code is never
committed: the output folder is git-ignored, and a test generates a fresh client."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "config.yaml")
PACKAGE = "speculation_client"
PROJECT = "speculation-client"


def spec() -> dict:
    """/openapi.json as the service serves it."""
    from service.app import create_app

    app = create_app({"RATE_LIMIT": None, "REDIS_URL": None})
    return app.test_client().get("/openapi.json").json


def generate(out: str, meta: str = "setup", document: dict | None = None) -> str:
    """Generate the client into `out` (replaced); returns the folder holding the package.
    Fails on any warning of the generator."""
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    path = os.path.join(out, "openapi.json")
    with open(path, "w") as handle:
        json.dump(document or spec(), handle, indent=2)
    target = os.path.join(out, PROJECT if meta != "none" else PACKAGE)
    generator = os.path.join(os.path.dirname(sys.executable), "openapi-python-client")
    # the generator's default hooks run ruff (a test dependency) from this environment's bin
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run([generator, "generate", "--path", path, "--config", CONFIG, "--meta", meta,
                           "--output-path", target, "--fail-on-warning"], capture_output=True, text=True, env=env)
    if done.returncode != 0 or "warning" in (done.stdout + done.stderr).lower():
        raise RuntimeError(f"openapi-python-client failed or warned:\n{done.stdout}\n{done.stderr}")
    return target


def build_wheel(out: str) -> str:
    """Generate the client and build its wheel into `out`/dist; returns the wheel's path."""
    project = generate(out)
    dist = os.path.join(out, "dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", dist, project], check=True)
    wheels = sorted(f for f in os.listdir(dist) if f.endswith(".whl"))
    return os.path.join(dist, wheels[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Generate the Python client and build its wheel.")
    parser.add_argument("--out", default=os.path.join(ROOT, "client"), help="output folder (replaced)")
    args = parser.parse_args(argv)
    print(build_wheel(args.out))


if __name__ == "__main__":
    main()
