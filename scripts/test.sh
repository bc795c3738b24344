#!/usr/bin/env bash
# Set up the environment from the repo's own files, then run the test suite (GPU tests skip without a GPU).
# pytest's exit code 5 ("no tests collected") is a failure here, never a silent pass.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-env.sh || exit 1
# Two pytest-xdist workers (dev group), a test file's tests on one worker (its module fixtures are built once; a
# file's fixed port or /tmp folder is never used twice at once): most tests wait on worker subprocesses, so two
# processes keep both cores of a CI machine busy. LADDER_TEST_WORKERS=0 runs serially (or pass -n 0: the last wins).
# (--dist loadfile, not loadgroup: pytest 9.2 ignores the node id suffix xdist 3.8 adds for xdist_group marks.)
.venv/bin/python -m pytest -n "${LADDER_TEST_WORKERS:-2}" --dist loadfile "$@"
rc=$?
if [ "$rc" -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi
exit "$rc"
