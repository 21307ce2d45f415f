"""The two worker roles and the commands beside them: the reference role (reference outputs, judging),
the candidate role and its correctness stage, and `python3 -m kforge_worker audit|estimate`."""
