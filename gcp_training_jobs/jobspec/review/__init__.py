"""Stage 8, review: what a job costs (`cost`, its money in words: `money`), what it counts against quotas
(`quotas`), whether it obeys the stack's guardrails (`guardrails`) and what it has cost so far (`run_cost`), each
read from the job's facts (translate.facts.JobFacts: load.Judged.facts, or facts_of_body for a job as the API holds
it), so every vocabulary and backend is reviewed alike."""
