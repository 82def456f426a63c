"""`diff`: what a change does to the stacks against a git ref, both sides planned offline (command.py).

Empty on purpose: a module of this folder is imported alone.
"""
