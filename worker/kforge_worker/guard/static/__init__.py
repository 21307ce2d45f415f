"""Static guard: reward-hack checks on a candidate's source, before any of it runs.

:func:`analyze` parses the candidate with :mod:`ast` and scans the C++/CUDA strings it hands to
``load_inline``. It returns findings ``{"check", "severity", "message", "line"}``: ``check`` is a
stable id from :data:`CHECKS`, ``severity`` is ``"reject"`` (the verdict is ``rejected``) or
``"note"`` (recorded, the dynamic checks decide), ``message`` is one sentence a person can act on,
``line`` is 1-based or ``None``. The guard is conservative where it cannot know types: a method is
treated as a tensor method unless its receiver is known to be something else (a built extension,
a Python list, a dict). See docs/hacks.md for the classes behind each check.

The package is split by concern: `names`, `compute_names` and `sandbox_names` (tables), `report`
(findings), `symbols`, `source_text` and `module_table` (the module's symbol table), `context`,
`inference` and `call_kinds` (types), `forward_walker` (ModelNew.forward, with its calls in
`call_rules` judged by `torch_verdict`, the state it keeps in `state_rules` and where keys come
from in `key_sources`), `module_checker` (whole-module checks, with the rules of `file_rules`,
`patch_rules`, `precision_rules` and `reach_rules`), `native` (C++/CUDA sources: found in
`native_sources`, read with `native_patterns`, their reach outside the kernel in `native_sandbox`),
`analysis` (entry points).
"""

from .analysis import analyze, analyze_file, main, rejections
from .compute_names import COMPUTE_FUNCTIONS, COMPUTE_TENSOR_METHODS
from .names import CHECKS

__all__ = ["CHECKS", "COMPUTE_FUNCTIONS", "COMPUTE_TENSOR_METHODS", "analyze", "analyze_file", "main", "rejections"]
