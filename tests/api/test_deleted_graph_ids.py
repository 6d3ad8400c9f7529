"""A deleted graph's runs stay behind under its id: an import of its export file into another workspace took the
id again, and with it the other team's runs, readable through the API."""

from __future__ import annotations

import json

from nodes._registry import default_registry


async def test_an_import_into_another_workspace_does_not_reach_a_deleted_graphs_runs(team):
    # Eve (an outsider) has an export of the team's graph: every export carries the graph's id.
    export = json.dumps(team.graphs.get(team.graph_id).graph)
    team.graphs.delete(team.graph_id)  # the team deletes the graph (its runs, chats and pins stay behind)

    eve = team.accounts.user_by_email("eve@example.org")
    mine = team.accounts.personal_workspace(eve.id).id
    summary, issues = team.graphs.import_json(export, default_registry(), workspace_id=mine)
    assert issues == []

    async with team.client("outsider") as client:
        listed = await client.get(f"/api/v1/graphs/{summary.id}/runs")
        run = await client.get(f"/api/v1/runs/{team.run_id}")
    assert listed.status_code == 200, listed.text
    assert team.run_id not in [r.get("run_id", r.get("id")) for r in listed.json()], "Eve lists the team's runs"
    assert run.status_code == 404, f"Eve reads the team's run: {run.text[:300]}"
