"""`nodeflow run` on the data-node example graphs: each runs to completion with the outputs it promises."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nodeflow_app.cli import main

EXAMPLES = Path(__file__).parent / "fixtures" / "graphs" / "examples"


@pytest.fixture(autouse=True)
def database(tmp_path, monkeypatch):
    monkeypatch.setenv("REFLEX_DB_URL", f"sqlite:///{tmp_path / 'runs.db'}")


def run(capsys, graph: str, *options: str) -> dict:
    assert main(["run", str(EXAMPLES / graph), "--json", *options]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert lines[-1]["event_type"] == "run_completed", lines[-1]
    return lines[-1]["outputs"]


#  Start -> Each order -> Drop repeats -> Open and worth it -pass-> Biggest first -> Top two -> Report
#                                                          \-reject-> Set aside
def test_order_pipeline(capsys):
    outputs = run(capsys, "order_pipeline.json")
    assert [o["id"] for o in outputs["Drop repeats"]["output"]] == ["A-7", "A-2", "A-10", "A-12", "A-3"]
    assert outputs["Each order"]["output"][0]["shop"] == "North"  # other fields came along
    assert outputs["Report"]["output"] == {"top_total": 430, "top_ids": "A-3 > A-7",
                                           "customers": ["ada@x.org", "ada@x.org"]}
    assert outputs["Set aside"]["output"] == {"count": 2, "largest": 400}


def test_order_pipeline_with_nothing_rejected_skips_that_branch(capsys):
    payload = json.dumps({"orders": [{"id": "B-1", "status": "open", "total": 60}]})
    assert main(["run", str(EXAMPLES / "order_pipeline.json"), "--input", payload, "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert [e["node_id"] for e in lines if e.get("event_type") == "skipped"] == ["others"]
    assert lines[-1]["outputs"]["Report"]["output"]["top_ids"] == "B-1"


#  Start -> Invoice (JSONata on the input) -> Line texts (JSONata on each line)
def test_json_transform(capsys):
    outputs = run(capsys, "json_transform.json")
    assert outputs["Invoice"]["output"]["to"] == "Ada Lovelace" and outputs["Invoice"]["output"]["total"] == 17
    assert outputs["Line texts"]["output"] == ["1. pen x4 = 10", "2. ink x1 = 7"]


#  Start -> Score texts -> Scores -> Unique scores -> Ranked -> Ranking
#        \-> Birth date
#        \-> Sentences
def test_text_and_types(capsys):
    outputs = run(capsys, "text_and_types.json")
    assert outputs["Scores"]["output"] == [12, 7, 12, 30, 9]
    assert outputs["Ranking"]["output"] == "30 > 12 > 9 > 7"
    assert outputs["Birth date"]["output"]["born"] == "1990-05-31T00:00:00"
    assert outputs["Sentences"]["output"] == ["Hi there.", "Call Dr. Lee at noon!", "Thanks"]


#  Start -> Lines (Split Out) -> Ordered goods (Filter) -pass-> Price lines (Code) -> Totals (Aggregate)
def test_split_filter_code_aggregate(capsys):
    outputs = run(capsys, "split_filter_code_aggregate.json")
    assert [line["sku"] for line in outputs["Ordered goods"]["pass"]] == ["pen", "paper"]
    assert [line["amount"] for line in outputs["Price lines"]["output"]] == [12.0, 25.2]
    totals = outputs["Totals"]["output"]
    assert totals["total"] == pytest.approx(37.2) and totals["skus"] == "pen, paper" and totals["order"] == 42


def test_nodes_lists_the_data_nodes(capsys):
    assert main(["nodes"]) == 0
    out = capsys.readouterr().out
    for node_id in ("json-transform", "filter", "sort", "limit", "remove-duplicates", "split-out", "aggregate",
                    "text-split", "type-converter"):
        assert any(line.split()[0] == node_id for line in out.splitlines() if line.strip()), node_id


#  Greet everyone: Start -> Each person [Greeter (Execute Graph: the stored graph example-greeter)]
def test_execute_graph_runs_a_stored_graph_per_person(capsys):
    from nodeflow_app.store.graphs import GraphStore
    from nodes._registry import default_registry

    store = GraphStore()  # the CLI's database (REFLEX_DB_URL): the called graph must be stored there
    stored, issues = store.import_json((EXAMPLES / "execute_graph_greeter.json").read_text(), default_registry())
    store.engine.dispose()
    assert not issues and stored.id == "example-greeter"
    outputs = run(capsys, "execute_graph.json")
    assert outputs["Each person"]["output"]["results"] == [{"greeting": "Hello, Ada!"}, {"greeting": "Hello, Alan!"}]
