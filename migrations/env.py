"""Alembic environment of the case store.

Lineup runs migrations through ``app.store.database.upgrade_to_head``, which passes an open connection (in
one transaction, foreign keys off) as ``config.attributes["connection"]``. From the command line, give the
database with ``-x db=PATH`` (see ``migrations/alembic.ini``).
"""

from __future__ import annotations

from logging.config import fileConfig
from pathlib import Path

from alembic import context

from app.store.database import make_engine
from app.store.models import Base

config = context.config
target_metadata = Base.metadata


def _configure_and_run(connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_offline() -> None:
    context.configure(url="sqlite://", target_metadata=target_metadata, literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure_and_run(connection)
        return
    if config.config_file_name is not None:
        fileConfig(config.config_file_name, disable_existing_loggers=False)
    database = context.get_x_argument(as_dictionary=True).get("db")
    if not database:
        raise SystemExit("give the case database with -x db=PATH")
    engine = make_engine(Path(database), foreign_keys=False)
    try:
        with engine.connect() as connection:
            _configure_and_run(connection)
            if connection.in_transaction():
                connection.commit()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
