"""Generators of the documentation: each writes or prints pages under docs/ from the running
code (`python -m docs.tools.NAME`); tests fail while a generated page is stale."""
