"""A party's run report: what it linked, how well it expects that to be, and what it released."""
