"""Alembic migrations of the Lineup case store (``app.store``); applied to head when a store is opened."""
