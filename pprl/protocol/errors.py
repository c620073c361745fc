"""Errors a user can act on: each names the file, row and field it is about."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input (a file, a row, a field); the command line prints it and exits non-zero."""

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
