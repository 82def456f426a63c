"""`plan`: a stack judged, its program run under Pulumi's mocks, reviewed (command.py; the harness, mocks.py).

Empty on purpose: `diff` and `status` import single modules of this folder (placement, quota) without the rest.
"""
