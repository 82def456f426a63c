"""Stage 8, review: what a rendered job costs and whether it obeys the stack's guardrails, read from the
request body (`body_pools`), so every vocabulary and backend is reviewed alike."""
