"""The chat benchmark's parts that need no browser: the timed fake, Agno's stream in the child process, and the
report (table, targets, JSON lines) from synthetic page records. No timing checks beyond what a schedule guarantees.

The whole benchmark is not run here: it builds and serves the app itself (tests/e2e/server.py), which would be a
second server build in a `make test` whose e2e session already holds one (`python -m benchmarks chat --quick`).
"""

from __future__ import annotations

import json

from benchmarks import chat


def test_the_timed_fake_paces_on_a_schedule_and_the_agno_child_reads_every_token():
    fake = chat.timed_fake()
    server = chat.start_fake(fake)
    agno = chat.Agno(fake, chat.CpuMeter())
    try:
        paced = agno.sample(chat.Scenario("paced", "", 40, 0.005), "smoke paced")
        burst = agno.sample(chat.Scenario("burst", "", 200, 0.0), "smoke burst")
    finally:
        agno.close()
        server.stop()
    assert (paced.tokens, paced.source.chunks, burst.tokens, burst.source.chunks) == (40, 40, 200, 200)
    # Token i is due (i + 1) * 5 ms after the start: the last never before 200 ms; the first may be late.
    assert paced.source.last - paced.source.first >= 0.15
    assert paced.first >= paced.source.first and paced.last >= paced.source.last  # one clock on both sides
    assert "agno" in paced.extra["cpu_s"]


def _page_record(source_first_ms: float, text: str, updates: int) -> dict:
    """What the page's probe returns for one answer: frames in and out, the text growing in `updates` steps."""
    step = len(text) // updates
    growths = [[source_first_ms + 40 * (i + 1), step * (i + 1)] for i in range(updates - 1)]
    growths.append([source_first_ms + 40 * updates, len(text)])
    frames = [{"dir": "out", "size": 300, "t": source_first_ms - 50, "vars": [], "textBytes": 0, "head": ""},
              {"dir": "in", "size": 400, "t": source_first_ms - 20, "vars": ["messages", "stream", "stream_head"],
               "textBytes": 0, "head": ""}]  # the answer starts
    for t, _ in growths[:-1]:
        frames.append({"dir": "in", "size": 320 + step, "t": t - 3, "vars": ["stream"], "textBytes": step,
                       "head": '42/_event,["event",{}]'})
    frames.append({"dir": "in", "size": 200 + step, "t": growths[-1][0] - 3, "vars": ["stream", "stream_head"],
                   "textBytes": step, "head": ""})  # the end: its status and last ops
    return {"frames": frames, "growths": growths, "first": growths[0][0], "last": growths[-1][0],
            "status": "complete", "text": text}


def test_the_report_prints_every_measure_with_its_reference_target_and_json(capsys):
    scenarios = {"burst": 0.0, "paced": 0.0025, "first-token": 0.005}
    samples = []
    for key, delay in scenarios.items():
        scenario = chat.Scenario(key, "", 200, delay)
        text = "".join(scenario.answer())
        source = chat.StreamTiming(key, first=1000.0, last=1000.0 + 200 * delay, chunks=200)
        samples.append(chat.Sample("agno", key, 200, 1000.001, source.last + 0.001, source,
                                   {"cpu_s": {"agno": 0.1}}))
        got = _page_record(source.first * 1000, text, 10)
        extra = chat.wire(got, len(text.encode()), source.first, timeline=True)
        samples.append(chat.Sample("dom", key, 200, got["first"] / 1000, got["last"] / 1000, source,
                                   {**extra, "cpu_s": {"server": 0.2, "browser:renderer": 0.3}}))
    chats = [{"chat": i, "status": "complete", "own_answer": True, "foreign_marker_seen": None, "user_messages": 1,
              "user_is_own": True, "error_toasts": 0, "page_errors": 0, "tokens_per_s": 100.0} for i in range(3)]
    chats[2]["foreign_marker_seen"] = "c01x"  # cross-talk must show as a miss
    concurrent = {"chats": chats, "wall_s": 2.0, "delay_s": 0.008, "cpu_s": {"server": 1.0}, "server_tracebacks": 0}
    plan = chat.Plan(tokens=200, rounds=1, first_token_sends=1, chats=3, chat_tokens=40, chat_delay_s=0.008)

    rows = chat.report(plan, {"samples": samples, "concurrent": concurrent})

    out = capsys.readouterr().out
    assert {r["key"] for r in rows} == {"burst-rate", "paced-rate", "first-token", "burst-bytes", "paced-bytes",
                                         "concurrent"}
    table = [line for line in out.splitlines() if line.startswith(("burst:", "paced:", "first visible", "3 chats"))]
    assert len(table) == 6 and all(line.rstrip().endswith(("yes", "NO")) for line in table)
    concurrent_row = next(r for r in rows if r["key"] == "concurrent")
    assert not concurrent_row["met"] and "chat 2: saw c01x while streaming" in concurrent_row["problems"]
    assert "targets: MISSED:" in out and "where it goes" in out
    lines = [json.loads(line) for line in out.splitlines() if line.startswith('{"bench": "chat"')]
    assert len([x for x in lines if "measure" in x]) == 6 and len([x for x in lines if x.get("sample")]) == 6
    dom_burst = next(x for x in lines if x.get("sample") and x["system"] == "dom" and x["scenario"] == "burst")
    assert dom_burst["patch_frames"] == 9 and dom_burst["end_frames_bytes"] > 0 and dom_burst["frames_ms"]


def test_benchmarks_discovers_chat():
    from benchmarks.__main__ import discover

    assert "chat" in discover()
