"""Libraries of the optional extra `peer`, imported only by the commands that use them."""

from __future__ import annotations

import importlib
import warnings
from types import ModuleType

from pprl.protocol.errors import PprlError


class MissingExtraError(PprlError):
    """A command needs a library of an optional extra that is not installed."""


def import_extra(module: str, extra: str = "peer") -> ModuleType:
    try:
        with warnings.catch_warnings():
            # clkhash 0.17 asks setuptools' pkg_resources for its version (hence setuptools<81).
            warnings.filterwarnings("ignore", "pkg_resources is deprecated", UserWarning)
            return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtraError(
            f"needs {module.split('.')[0]} ({error}); "
            f"install the optional extra: pip install 'pprl[{extra}]'"
        ) from None
