"""Timing (docs/timing.md): the one timing routine, the candidate's timing stage and its dialogue
with the parent, trusted batches, timed-input contents, the cross-check, the reference's
baselines and its roofline bound."""
