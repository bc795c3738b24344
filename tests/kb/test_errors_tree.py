"""The exception tree: one registry entry per code, subclasses that keep a parent's code never replace it."""

from __future__ import annotations

import pickle

from kb.errors import InvalidArgument, LadderError, error_for_code


def test_a_subclass_keeping_its_parents_code_does_not_replace_the_parent() -> None:
    import kb.cardfiles  # noqa: F401  (defines CardFileError(InvalidArgument) without a code of its own)
    from optimizer.harness.contracts import ContractError

    assert error_for_code("invalid_argument") is InvalidArgument
    err = pickle.loads(pickle.dumps(InvalidArgument("bad", field="x")))
    assert type(err) is InvalidArgument and err.field == "x"
    assert issubclass(ContractError, LadderError) and issubclass(ContractError, ValueError)
