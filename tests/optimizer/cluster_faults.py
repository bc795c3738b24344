"""Fault injection for the fan-out tests, importable by Ray workers (the tests put this folder on PYTHONPATH)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kb.errors import Unavailable
from optimizer.cluster.spec import SessionSpec
from optimizer.cluster.task import default_connect


class _SubmitThenFail:
    """Delegates to a real client; the first submit goes through, then the call raises a transient error."""

    def __init__(self, client: Any, marker: Path) -> None:
        self._client, self._marker = client, marker

    def submit_trajectory(self, trajectory: Any) -> bool:
        created = self._client.submit_trajectory(trajectory)
        self._marker.write_text(f"{trajectory.id} created={created}\n")
        raise Unavailable("injected: the connection dropped after the server stored the trajectory")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class FlakySubmit:
    """A picklable KB factory: the first attempt of session ``key`` loses the reply to its submission."""

    def __init__(self, key: str, marker_dir: str | Path) -> None:
        self.key, self.marker_dir = key, str(marker_dir)

    def __call__(self, spec: SessionSpec) -> Any:
        client = default_connect(spec)
        marker = Path(self.marker_dir) / f"{spec.key}.submitted"
        if spec.key == self.key and not marker.exists():
            return _SubmitThenFail(client, marker)
        return client
