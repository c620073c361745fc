"""Privacy-preserving record linkage between two parties by split learning."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("pprl")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
