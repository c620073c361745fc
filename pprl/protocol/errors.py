"""Errors a user can act on; the command line prints their message instead of a traceback."""

from __future__ import annotations


class PprlError(Exception):
    """An error the user can act on; the CLI prints its message and exits with exit_code.

    Anything else that escapes a command is a bug and keeps its traceback.
    """

    exit_code = 1


class SettingError(PprlError, ValueError):
    """A setting or argument the method cannot honour (an unknown name, a value out of
    range), named in the message; exit 2, as for a usage error. Still a ValueError, so code
    that checks arguments the usual way keeps working. `setting` names the method key at
    fault, so a configuration file can point at its own line for it."""

    exit_code = 2

    def __init__(self, message: str, setting: str | None = None) -> None:
        super().__init__(message)
        self.setting = setting


class InputError(PprlError, ValueError):
    """Bad input (a file, a row, a field), named in the message; exit 2, as for a usage error."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        row: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.path = path
        self.row = row
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        where = []
        if self.path is not None:
            where.append(str(self.path))
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.field is not None:
            where.append(f"field {self.field!r}")
        return f"{', '.join(where)}: {self.message}" if where else self.message
