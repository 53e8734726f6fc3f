"""Real Jupyter kernels for tests, started so that parallel test workers cannot collide."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from jupyter_client.manager import KernelManager


@contextmanager
def running_kernel(*, cwd: str | None = None, timeout: float = 60.0) -> Iterator[tuple[Any, Any]]:
    """A started `python3` kernel and its ready client, shut down on exit, its socket
    directory removed. Over IPC sockets (files in a temp directory): over TCP, the ports
    jupyter_client picks as free can be taken by another worker's kernel before this one
    binds them, and the kernel dies at start with `Address already in use` (seen in CI,
    one run in many)."""
    where = tempfile.mkdtemp(prefix="lgnb-kernel-")
    try:
        km = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(where, "kernel"))
        km.start_kernel(cwd=cwd)
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=timeout)
            yield km, kc
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    finally:
        shutil.rmtree(where, ignore_errors=True)
