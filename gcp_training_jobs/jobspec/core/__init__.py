"""Stage 1, core: what every stage shares: names and patterns (with their sources), the one error base, and
problems (file, field path, what is wrong, what is allowed)."""
