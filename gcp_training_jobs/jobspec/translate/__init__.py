"""Stage 5, translate: a job's worker pools in one form (`pools.Pool`), whichever vocabulary it is written in,
each value with the path the user wrote it at. Rules, render and review read pools only from here."""
