"""A benchmark's JSON result, written whole or not at all: a run stopped while writing leaves
the previous result, never half of one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pprl.files.atomic import write_text_atomic


def write_result(path: Path, document: Any) -> None:
    """`document` as indented JSON at `path`; a value JSON has no type for (a path, a numpy
    number) is written as its text."""
    write_text_atomic(path, json.dumps(document, indent=2, default=str) + "\n")
