"""`status`, `logs` and `spend`: a stack's jobs as the APIs hold them after `pulumi up` (jobs.py finds them).

Empty on purpose: a module of this folder is imported alone, and none of them loads Pulumi.
"""
