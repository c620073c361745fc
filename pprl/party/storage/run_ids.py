"""Run ids name a directory in each daemon's state, so only a safe, short form is accepted."""

from __future__ import annotations

import re
import uuid

from pprl.protocol.errors import InputError

RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


class BadRunId(InputError):
    """A run id that could escape the state directory or that no daemon would have made."""


def check_run_id(run_id: str) -> str:
    """`run_id` itself, if it is 1-64 letters, digits, '-' or '_' starting with a letter or
    digit: never a path, a NUL byte or an empty name."""
    if not isinstance(run_id, str) or not RUN_ID_PATTERN.fullmatch(run_id):
        raise BadRunId(
            f"invalid run id {run_id!r}: use 1-64 letters, digits, '-' or '_', "
            "starting with a letter or digit"
        )
    return run_id


def new_run_id() -> str:
    return uuid.uuid4().hex
