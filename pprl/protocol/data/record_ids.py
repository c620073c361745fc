"""What a record id may be: it crosses the wire to the peer (for the accepted pairs) and is
written into both parties' result files, so both sides hold it to the same rule.

An id is matched exactly and never compared, so any printable text will do; what is refused
is what would corrupt a result file or deceive its reader: no id at all, control and
invisible formatting characters (a NUL, a right-to-left override, a zero-width space), and
ids too long to be anyone's identifier.
"""

from __future__ import annotations

import re
import unicodedata

MAX_ID_CHARS = 256
# Leading characters a spreadsheet reads as the start of a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?([eE][+-]?\d+)?")


def id_problem(value: str) -> str | None:
    """Why `value` cannot be a record id, in words that do not repeat it; None if it can."""
    if not value:
        return "empty id"
    if len(value) > MAX_ID_CHARS:
        return f"an id of {len(value):,} characters (at most {MAX_ID_CHARS})"
    for char in value:
        if unicodedata.category(char) in ("Cc", "Cf"):
            return f"an id holding the control or formatting character U+{ord(char):04X}"
    return None


def spreadsheet_safe(value: str) -> str:
    """A cell a spreadsheet shows as text, never runs as a formula: a leading =, +, -, @,
    tab or carriage return is escaped with an apostrophe (the OWASP advice for CSV files);
    a plain number (a negative score) is left as it is."""
    if not value.startswith(FORMULA_STARTS) or _NUMBER.fullmatch(value):
        return value
    return "'" + value
