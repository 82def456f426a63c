"""Stage 8, review: what a job costs, what it counts against quotas and whether it obeys the stack's guardrails,
read from its pools in the one form (load.Judged.pools; a body's by the same translation,
translate.pools.pools_of_body) and its request body, so every vocabulary and backend is reviewed alike."""
