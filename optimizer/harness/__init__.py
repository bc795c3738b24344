"""The execution harness: everything that loads, runs, checks and times a candidate, below the ladder and the session.

- ``problem``: the problem format (CASES, SMOKE_CASES, UNSEEN_CASES, TOLERANCES, onboarding declarations);
- ``validate``, ``hacks``, ``probes``: correctness against the reference, and the checks that refuse shortcuts;
- ``sandbox``, ``zygote``, ``worker``, ``contracts``: the sandboxed worker process and its typed pipe protocol;
- ``timing``, ``verdict``, ``gpulock``: interleaved timing, bootstrap intervals, improved/neutral/regressed, one
  timing session per GPU;
- ``evaluation``, ``measure``, ``compile_only``: what the levels and the session call (evaluate a candidate, profile
  it, compile it without executing), the only way they reach the sandbox;
- ``triton_env``: a second Triton (3.6) reached through a subprocess.

Data flows one way: session -> ladder / proposers -> harness (this package) -> sandboxed worker. Nothing here
imports the ladder, the proposers or the session.
"""
