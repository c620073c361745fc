"""Scoring and matching released rows: candidates, blockwise scores, the one-to-one assignment."""
