"""Both parties must run the same pprl: the agreement digest fixes the method's parameters,
not the code that carries them out, so two versions could compute different things."""

from __future__ import annotations


def check_versions(ours: str, theirs: str, peer: str = "the peer") -> str | None:
    """Why a run cannot go on between these two versions, or None when they are the same."""
    if ours == theirs:
        return None
    return (
        f"software versions differ: this party runs pprl {ours}, {peer} runs pprl "
        f"{theirs or '(version not stated)'}; both parties must run the same version"
    )
