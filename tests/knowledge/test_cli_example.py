"""`nodeflow run` on the example graph that indexes a folder of uploaded files (Markdown, HTML, CSV) and searches it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.knowledge import files

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tests" / "fixtures" / "graphs" / "examples" / "rag_index_folder.json"


def test_the_example_indexes_a_folder_and_finds_the_answer(private_data_dir):
    folder = private_data_dir / "uploads" / "default" / "handbook"  # the CLI runs in "default" before accounts
    folder.mkdir(parents=True)
    (folder / "returns.md").write_text("# Returns\nKeep the receipt.\n## Refunds\nRefunds are paid within 14 days.\n")
    (folder / "shipping.html").write_bytes(files.HTML)
    (folder / "prices.csv").write_text("item,price\ntea,3\n")
    env = {**os.environ, "NODEFLOW_DATA_DIR": str(private_data_dir), "PYTHONPATH": str(ROOT),
           "REFLEX_DB_URL": f"sqlite:///{private_data_dir / 'runs.db'}"}
    done = subprocess.run([sys.executable, "-m", "nodeflow_app.cli", "run", str(EXAMPLE), "--input",
                           json.dumps({"question": "when are refunds paid"})],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = json.loads(done.stdout.strip().splitlines()[-1])["outputs"]
    assert outputs["Store"]["output"] == {"collection": "handbook", "written": 4, "deleted": 0}
    found = outputs["Find"]["output"]["documents"]
    assert found[0]["text"] == "## Refunds\nRefunds are paid within 14 days."
    assert found[0]["metadata"] == {"source": "handbook/returns.md", "title": "Returns", "chunk": 1,
                                    "heading": "Returns > Refunds"}
