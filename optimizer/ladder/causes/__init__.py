"""Per-level cause findings: code (L1), profile (L2), IR (L3), compiler invariants (L4).

Each module turns what its level knows into ``optimizer.ladder.findings.Finding`` objects; the rules and their
confidences are documented next to each rule. ``optimizer.ladder.decide`` combines the findings of all levels.
"""

from optimizer.ladder.causes.code import code_findings, pointer_elem_bytes
from optimizer.ladder.causes.ir import ir_findings
from optimizer.ladder.causes.profile import profile_findings, roofline_finding

__all__ = ["code_findings", "ir_findings", "pointer_elem_bytes", "profile_findings", "roofline_finding"]
