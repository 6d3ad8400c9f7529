"""`make run`'s build cache (nodeflow_app/serve.py): the key follows the front end's sources and the port only."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nodeflow_app import serve


@pytest.fixture
def app_root(tmp_path: Path) -> Path:
    for folder in ("nodeflow_app", "nodes/ai/agent", "assets", "reflex.lock", "tests", "data", "docs"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "rxconfig.py").write_text("config = 1\n")
    (tmp_path / "nodeflow_app" / "state.py").write_text("x = 1\n")
    (tmp_path / "nodes/ai/agent/definition.py").write_text("d = 1\n")
    (tmp_path / "assets" / "flow_canvas.jsx").write_text("export const A = 1;\n")
    return tmp_path


@pytest.mark.parametrize("change", [
    "nodeflow_app/state.py", "nodes/ai/agent/definition.py", "assets/flow_canvas.jsx", "rxconfig.py",
    "reflex.lock/package.json", "nodeflow_app/templates/new.json",
])
def test_a_front_end_source_changes_the_key(app_root, change):
    before = serve.build_key(app_root, 3000)
    (app_root / change).parent.mkdir(parents=True, exist_ok=True)
    (app_root / change).write_text("changed\n")
    assert serve.build_key(app_root, 3000) != before


@pytest.mark.parametrize("change", ["data/nodeflow.db-wal", "tests/test_x.py", "docs/a.png",
                                    "nodeflow_app/__pycache__/state.cpython-311.pyc"])
def test_what_the_app_writes_and_tests_do_not(app_root, change):
    before = serve.build_key(app_root, 3000)
    (app_root / change).parent.mkdir(parents=True, exist_ok=True)
    (app_root / change).write_text("changed\n")
    assert serve.build_key(app_root, 3000) == before


def test_the_port_and_the_bundle_s_config_overrides_are_in_the_key(app_root, monkeypatch):
    before = serve.build_key(app_root, 3000)
    assert serve.build_key(app_root, 3001) != before
    monkeypatch.setenv("REFLEX_DB_URL", "sqlite:///elsewhere.db")  # backend only
    assert serve.build_key(app_root, 3000) == before
    monkeypatch.setenv("REFLEX_API_URL", "https://nodeflow.example.com")
    assert serve.build_key(app_root, 3000) != before


def test_a_build_is_current_only_with_its_key_beside_it(tmp_path):
    web = tmp_path / ".web"
    assert not serve.build_is_current("k", web)
    (web / "build" / "client").mkdir(parents=True)
    (web / "build" / "client" / "index.html").write_text("<html>")
    assert not serve.build_is_current("k", web)  # built by something else (no key)
    (web / serve.KEY_NAME).write_text("k\n")
    assert serve.build_is_current("k", web)
    assert not serve.build_is_current("other", web)
    shutil.rmtree(web / "build")  # what every Reflex build does first
    assert not serve.build_is_current("k", web)
