"""Ratings: openskill over the rated games, a projection of their logs (service/ratings/service.py)."""
