"""The one kernel model: what a candidate's kernels and launches do, read off one libcst parse.

L1's cause findings (``optimizer.ladder.causes.code``, through ``features``) and every structural transform's
preconditions (``optimizer.rewrite``) read the same records, built by the same functions, so L1 cannot decide a
cause from a fact the transform does not see (issue 29).

- ``flow``: data flow over a kernel (``dependents``: what derives from a program id, an arange, a load;
  ``pointer_bases``: which pointer parameter an address is based on; ``rank_of``; ``is_allocation``).
- ``model``: the records (``KernelFacts`` with its ``Access``/``Loop``/``Dot``, ``LaunchFacts``, ``ModuleFacts``);
  facts only L1 reads (source lines, passes, loop reductions) are derived on first use by ``derived``.
- ``analyze``: ``kernel_facts`` / ``launch_facts`` / ``module_facts`` on a ``rewrite.tree.Tree``.
- ``launcher``: host-side facts (per-call host setup, launches in loops, DRAM round trips, grids).
- ``features``: L1's quick-match vocabulary (``extract_features`` -> ``CodeFeatures``) derived from the above.
"""
