"""Fan optimization sessions out over many accelerators against one central KB.

``fanout.run_cluster`` runs one Ray task per session; ``procs.run_local`` is the no-Ray runner (one process
slot per local device). Both run ``task.run_session`` and submit trajectories under deterministic ids, so a
retried session is stored once. Import the runners from their modules (Ray is imported only when used).
"""

from __future__ import annotations

from optimizer.cluster.spec import ClusterResult, SessionSpec, make_specs, trajectory_id

__all__ = ["ClusterResult", "SessionSpec", "make_specs", "trajectory_id"]
