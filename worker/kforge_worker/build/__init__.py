"""Building: the candidate's extension builds (quiet, cached, with their kernels, SASS and PTX)
and the bytecode cache of `python3 -m kforge_worker prime`."""
