"""`lgnb.server.start_dev_server`: what the fixture and the server notebook start with."""

from __future__ import annotations

from pathlib import Path

import pytest

from lgnb.server import start_dev_server


def test_a_folder_without_langgraph_json_is_refused_with_what_a_project_needs(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no langgraph.json.*graphs"):
        start_dev_server(tmp_path)


def test_the_server_answers_serves_a_copy_and_stop_removes_it(server_url: str) -> None:
    # the session server is up (started by this helper); a second one starts beside it on its own port
    app = Path(__file__).parent / "app"
    with start_dev_server(app) as server:
        assert server.running and server.url != server_url
        assert server.workdir != app and (server.workdir / "langgraph.json").is_file()
        workdir = server.workdir
    assert not server.running and not workdir.exists()
    assert not (app / ".langgraph_api").exists()  # the project folder is left as it was
