"""The /v1 blueprints (blueprints.py registers them); each route calls the core only."""
