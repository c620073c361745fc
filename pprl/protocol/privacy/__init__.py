"""Attacks on a release and the noise that answers them: what the privacy gate measures."""
