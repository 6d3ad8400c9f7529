"""SQL against a connection's database (PostgreSQL, MySQL / MariaDB, a SQLite file): what the Database Query node runs."""

from nodeflow_app.sql.run import Outcome, bind_names, run_checked, run_statement, sqlite_file

__all__ = ["Outcome", "bind_names", "run_checked", "run_statement", "sqlite_file"]
