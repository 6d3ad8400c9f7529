"""nodes/integration/http_request against a local server that records what it receives (tests/nodes/recording_server.py)."""

from __future__ import annotations

import base64
import json
from urllib.parse import urlencode

import pytest
from cryptography.fernet import Fernet

from nodeflow_app.contract import FlowContext, NodeError
from nodeflow_app.files import file_path, store_bytes
from nodeflow_app.net.guard import MAX_BODY_ENV
from nodeflow_app.store.connections import ConnectionStore
from nodeflow_app.store.db import make_engine
from nodes.integration.http_request.definition import definition
from nodes.integration.http_request.executor import executor
from tests.nodes.recording_server import FILE_BYTES, RecordingServer


@pytest.fixture
def server(monkeypatch, tmp_path):
    monkeypatch.setenv("NODEFLOW_HTTP_ALLOWLIST", "127.0.0.1")
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    with RecordingServer() as running:
        yield running


@pytest.fixture
def connections(tmp_path):
    store = ConnectionStore(make_engine(f"sqlite:///{tmp_path / 'app.db'}"), Fernet.generate_key())
    # The test server speaks plain http: each connection says it may go there unencrypted (http://).
    store.set("bearer", "http_bearer", {"token": "t0ken", "hosts": "http://127.0.0.1"})
    store.set("basic", "http_basic", {"username": "ada", "password": "s3cret:x", "hosts": "http://127.0.0.1"})
    store.set("header", "http_header", {"header": "X-Api-Key", "value": "k3y", "hosts": "http://*"})
    store.set("query", "http_query", {"param": "api_key", "value": "q3y", "hosts": "example.com, http://127.0.0.1"})
    store.set("db", "sqlite", {"path": "x.db"})
    return store


async def call(url, connections=None, **data):
    ctx = FlowContext(node_id="http", node_type="http-request", run_id="run-1", runtime=None,
                      services={"connections": connections} if connections else {})
    result = await executor.execute({**definition.defaults(), "url": url, **data}, {"input": None}, ctx)
    return result.outputs["output"]


# -- responses -----------------------------------------------------------------------------------------

async def test_a_json_response_with_query_and_headers(server):
    output = await call(server.url + "/json?keep=1", query=[{"name": "q", "value": "a b"}, {"name": "n", "value": 2}],
                        headers=[{"name": "X-Trace", "value": "abc"}])
    assert output["status"] == 200
    assert output["body"] == {"ok": True, "query": {"keep": "1", "q": "a b", "n": "2"}}
    assert output["headers"]["content-type"] == "application/json"
    sent = server.requests[-1]
    assert (sent.method, sent.headers["x-trace"], sent.headers["user-agent"]) == ("GET", "abc", "NodeFlow-HTTP-Request/1")


async def test_text_and_forced_formats(server):
    assert (await call(server.url + "/text"))["body"] == "héllo\n"
    assert (await call(server.url + "/json", response_format="text"))["body"].startswith('{"ok": true')
    with pytest.raises(NodeError, match="the response is not JSON .* choose the Text response format"):
        await call(server.url + "/not-json")


async def test_a_binary_response_is_stored_once_and_passed_by_reference(server, tmp_path):
    first = (await call(server.url + "/file"))["body"]
    again = (await call(server.url + "/file", response_format="file"))["body"]
    assert first == again == {"file_id": first["file_id"], "name": "report.pdf", "content_type": "application/pdf",
                              "size": len(FILE_BYTES)}
    assert file_path(first).read_bytes() == FILE_BYTES
    assert [p.name for p in (tmp_path / "files" / "default").iterdir()] == [first["file_id"]]  # no workspace: "default"
    assert (tmp_path / "files").stat().st_mode & 0o777 == 0o700 and file_path(first).stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "files" / "default").stat().st_mode & 0o777 == 0o700


async def test_a_stored_file_opens_only_in_the_workspace_that_stored_it(server, tmp_path):
    """A file id read in another workspace's run records (by a viewer, or someone who left) opens nothing
    elsewhere: not its bytes, not even whether it exists."""
    async def in_workspace(workspace: str, **data):
        ctx = FlowContext(node_id="http", node_type="http-request", run_id="run-1", runtime=None,
                          services={"workspace_id": workspace})
        result = await executor.execute({**definition.defaults(), **data}, {"input": None}, ctx)
        return result.outputs["output"]

    team_file = (await in_workspace("teamworkspace01", url=server.url + "/file"))["body"]
    assert (tmp_path / "files" / "teamworkspace01" / team_file["file_id"]).is_file()
    send = {"url": server.url + "/json", "method": "POST", "body_type": "multipart", "file": team_file}
    with pytest.raises(NodeError, match=f"parameter 'file': no stored file {team_file['file_id']} in this workspace"):
        await in_workspace("personal000001", **send)
    await in_workspace("teamworkspace01", **send)
    assert FILE_BYTES in server.requests[-1].body


async def test_text_without_a_charset_that_is_not_utf8_reads_as_latin1(server):
    assert (await call(server.url + "/latin1"))["body"] == "café Zürich"  # was "caf\ufffd Z\ufffdrich"


async def test_a_large_json_body_is_parsed_whole(server):  # in a thread, past OFF_LOOP_BYTES
    output = await call(server.url + "/big-json?items=60000")  # ~3.5 MB
    assert len(output["body"]) == 60_000 and output["body"][-1]["n"] == 59_999


async def test_the_node_keeps_its_own_size_limits_not_the_guards(server, monkeypatch):
    """Its text stops at 16 MB and a file at 1 GB (streamed to disk, `fetch.py`): the body limit of other guarded
    clients (NODEFLOW_HTTP_MAX_RESPONSE_MB) is not its, and its response headers stay as the server sent them."""
    monkeypatch.setenv(MAX_BODY_ENV, "1")
    output = await call(server.url + "/big-json?items=60000")  # ~3.5 MB
    assert len(output["body"]) == 60_000


async def test_head_has_no_body(server):
    output = await call(server.url + "/json", method="HEAD")
    assert (output["status"], output["body"], server.requests[-1].method) == (200, None, "HEAD")


# -- non-2xx ---------------------------------------------------------------------------------------------

async def test_a_non_2xx_status_fails_the_node_by_default(server):
    with pytest.raises(NodeError, match=r"GET http://127\.0\.0\.1:\d+/status/404 answered 404 Not Found: .*nope"):
        await call(server.url + "/status/404?token=hidden")


async def test_a_non_2xx_status_can_be_an_output(server):
    output = await call(server.url + "/status/503", http_errors="output")
    assert (output["status"], output["body"]) == (503, {"error": "nope"})


# -- authentication, from a named connection ---------------------------------------------------------

@pytest.mark.parametrize(("name", "check"), [
    ("bearer", lambda r: r.headers["authorization"] == "Bearer t0ken"),
    ("basic", lambda r: r.headers["authorization"] == "Basic " + base64.b64encode(b"ada:s3cret:x").decode()),
    ("header", lambda r: r.headers["x-api-key"] == "k3y" and "authorization" not in r.headers),
    ("query", lambda r: ("api_key", "q3y") in r.query and "authorization" not in r.headers),
])
async def test_every_authentication_kind(server, connections, name, check):
    await call(server.url + "/json", connections, connection=name)
    assert check(server.requests[-1])


async def test_a_connection_goes_only_to_the_hosts_it_names(server, connections):
    connections.set("elsewhere", "http_bearer", {"token": "t0ken", "hosts": "api.example.com, *.example.org"})
    connections.set("unbound", "http_bearer", {"token": "t0ken"})  # stored before hosts existed, or without
    with pytest.raises(NodeError, match=r"connection 'elsewhere' may be sent only to api.example.com, "
                                        r"\*.example.org, not to 127.0.0.1"):
        await call(server.url + "/json", connections, connection="elsewhere")
    with pytest.raises(NodeError, match="connection 'unbound' does not say which hosts it may be sent to"):
        await call(server.url + "/json", connections, connection="unbound")
    # httpx reads this URL's host as 127.0.0.1 (the part after the last '@'), whatever precedes it
    with pytest.raises(NodeError, match="not to 127.0.0.1"):
        await call(server.url.replace("//", "//api.example.com\\@") + "/json", connections, connection="elsewhere")
    with pytest.raises(NodeError, match="a Host header cannot be sent with a connection"):
        await call(server.url + "/json", connections, connection="bearer", headers=[{"name": "host", "value": "x"}])
    assert server.requests == []


async def test_a_connection_travels_over_https_only_unless_its_hosts_say_http(server, connections):
    """A listed host reached over plain http would show the token to anyone on the path."""
    connections.set("tls", "http_bearer", {"token": "t0ken", "hosts": "127.0.0.1, *.example.com"})
    with pytest.raises(NodeError, match=r"connection 'tls' goes to 127.0.0.1 over https only, and this URL is "
                                        r"http://: use https://, or the workspace's owner adds "
                                        r"http://127.0.0.1 to the connection's hosts to let it travel unencrypted"):
        await call(server.url + "/json", connections, connection="tls")
    assert server.requests == []
    connections.set("tls", "http_bearer", {"token": "t0ken", "hosts": "*.example.com, http://127.0.0.1"})
    await call(server.url + "/json", connections, connection="tls")
    assert server.requests[-1].headers["authorization"] == "Bearer t0ken"


@pytest.mark.parametrize(("hosts", "host", "allowed"), [
    ("api.example.com", "api.example.com", True),
    ("http://api.example.com", "api.example.com", True),
    ("http://*.example.com", "a.example.com", True),
    ("http://api.example.com", "example.com", False),
    ("API.Example.com.", "api.example.com", True),
    ("api.example.com", "example.com", False),
    ("*.example.com", "a.b.example.com", True),
    ("*.example.com", "example.com", False),
    ("*.example.com", "evilexample.com", False),
    ("*", "anything.test", True),
    ("[::1]", "::1", True),
    ("xn--bcher-kva.example", "xn--bcher-kva.example", True),
])
def test_host_patterns(hosts, host, allowed):
    from nodeflow_app.connections import Connection, check_fields, check_host

    connection = Connection("c", "http_bearer", check_fields("http_bearer", {"token": "t", "hosts": hosts}))
    if allowed:
        check_host(connection, host)
    else:
        with pytest.raises(NodeError, match="may be sent only to"):
            check_host(connection, host)


@pytest.mark.parametrize("hosts", ["https://api.example.com", "ftp://api.example.com", "api.example.com/v1",
                                   "api.example.com:443", "http://", " , "])
def test_hosts_that_are_not_host_names_are_refused_when_stored(hosts):
    from nodeflow_app.connections import check_fields
    from nodeflow_app.llm.credentials import CredentialError

    with pytest.raises(CredentialError, match="hosts"):
        check_fields("http_bearer", {"token": "t", "hosts": hosts})


async def test_a_missing_or_wrong_kind_of_connection_is_a_clear_error(server, connections):
    with pytest.raises(NodeError, match="no connection named 'nope' in workspace 'default'"):
        await call(server.url + "/json", connections, connection="nope")
    with pytest.raises(NodeError, match="connection 'db' is a sqlite connection; this node needs one of: http_bearer"):
        await call(server.url + "/json", connections, connection="db")
    assert server.requests == []


# -- bodies ---------------------------------------------------------------------------------------------

async def test_a_json_body(server):
    await call(server.url + "/json", method="POST", body_type="json", json_body={"a": [1, "é"], "b": None})
    sent = server.requests[-1]
    assert sent.headers["content-type"] == "application/json"
    assert json.loads(sent.body) == {"a": [1, "é"], "b": None}


async def test_a_form_body(server):
    await call(server.url + "/json", method="POST", body_type="form",
               form=[{"name": "a", "value": "1 & 2"}, {"name": "b", "value": True}])
    sent = server.requests[-1]
    assert sent.headers["content-type"] == "application/x-www-form-urlencoded"
    assert sent.body == b"a=1+%26+2&b=true"


async def test_a_raw_text_body_with_its_content_type(server):
    await call(server.url + "/json", method="PUT", body_type="text", text_body="<a>1</a>", content_type="text/xml")
    sent = server.requests[-1]
    assert (sent.method, sent.headers["content-type"], sent.body) == ("PUT", "text/xml", b"<a>1</a>")


async def test_a_multipart_body_with_a_stored_file(server):
    reference = store_bytes(b"col\n1\n", "data.csv", "text/csv")
    await call(server.url + "/json", method="POST", body_type="multipart", form=[{"name": "note", "value": "hi"}],
               file=reference, file_field="upload")
    sent = server.requests[-1]
    assert sent.headers["content-type"].startswith("multipart/form-data; boundary=")
    assert b'name="note"\r\n\r\nhi\r\n' in sent.body
    assert b'name="upload"; filename="data.csv"\r\nContent-Type: text/csv\r\n\r\ncol\n1\n\r\n' in sent.body


async def test_a_multipart_body_without_a_file_is_still_multipart(server):
    await call(server.url + "/json", method="POST", body_type="multipart",
               form=[{"name": "note", "value": "hi"}, {"name": "tag", "value": "a"}, {"name": "tag", "value": "b"}])
    sent = server.requests[-1]
    assert sent.headers["content-type"].startswith("multipart/form-data; boundary=")  # was url-encoded: note=hi
    assert b'name="note"\r\n\r\nhi\r\n' in sent.body and sent.body.count(b'name="tag"') == 2


async def test_a_multipart_file_that_is_not_a_reference_is_refused(server):
    with pytest.raises(NodeError, match="parameter 'file' must be a file reference"):
        await call(server.url + "/json", method="POST", body_type="multipart", file={"name": "x"})


# -- redirects, each hop checked -------------------------------------------------------------------------

async def test_redirects_are_followed_and_a_303_becomes_a_get(server):
    output = await call(server.url + f"/redirect?code=303&to={server.url}/json", method="POST", body_type="json",
                        json_body={"a": 1})
    assert output["body"]["ok"] is True
    assert [(r.method, r.path) for r in server.requests] == [("POST", "/redirect"), ("GET", "/json")]
    assert server.requests[-1].body == b""


async def test_a_307_keeps_the_method_and_body(server):
    await call(server.url + "/redirect?code=307&to=/json", method="POST", body_type="text", text_body="x")
    assert [(r.method, r.body) for r in server.requests] == [("POST", b"x"), ("POST", b"x")]


async def test_a_redirect_to_a_private_address_is_refused(server):
    with pytest.raises(NodeError, match=r"refused http://127\.0\.0\.2:\d+/json: 127\.0\.0\.2 is a loopback address"):
        await call(server.url + f"/redirect?to=http://127.0.0.2:{server.server_address[1]}/json")
    assert [r.path for r in server.requests] == ["/redirect"]


async def test_a_private_address_is_refused_when_not_allowlisted(server, monkeypatch):
    monkeypatch.delenv("NODEFLOW_HTTP_ALLOWLIST")
    with pytest.raises(NodeError, match="127.0.0.1 is a loopback address"):
        await call(server.url + "/json")
    assert server.requests == []


async def test_redirect_limits_and_not_following(server):
    loop = server.url + "/redirect?to=/redirect%3Fto%3D/json"
    with pytest.raises(NodeError, match="more than 1 redirects"):
        await call(loop, max_redirects=1)
    output = await call(server.url + "/redirect?to=/json", follow_redirects=False)
    assert (output["status"], output["headers"]["location"]) == (302, "/json")


async def test_the_credential_is_not_sent_to_another_origin(server, connections):
    with RecordingServer() as other:
        await call(server.url + f"/redirect?to={other.url}/json", connections, connection="bearer")
    assert server.requests[0].headers["authorization"] == "Bearer t0ken"
    assert "authorization" not in other.requests[0].headers


# -- secret headers -------------------------------------------------------------------------------------

def _secret_headers(url: str, **values: str) -> list[dict]:
    """Rows as the editor stores them: each value sealed for the URL's origin (nodeflow_app/secret_values.py)."""
    from nodeflow_app.secret_values import seal_parameter

    parameter = next(p for p in definition.parameters if p.id == "secret_headers")
    rows = [{"name": name.replace("_", "-"), "value": value} for name, value in values.items()]
    return seal_parameter(parameter, rows, {"url": url})


async def test_secret_headers_are_sealed_for_the_url_and_sent_there_only(server):
    rows = _secret_headers(server.url + "/json", X_Api_Key="k3y-s3cret")
    assert "k3y-s3cret" not in json.dumps(rows)  # what the graph (and its export, its runs) holds
    with RecordingServer() as other:
        await call(server.url + f"/redirect?to={other.url}/json", secret_headers=rows,
                   headers=[{"name": "Accept", "value": "application/json"}])
        assert "x-api-key" not in other.requests[0].headers  # a redirect to another origin gets no secret
        with pytest.raises(NodeError, match=r"secret header X-Api-Key was entered for http://127.0.0.1:\d+, not "
                                            r"for http://127.0.0.1:\d+"):
            await call(other.url + "/json", secret_headers=rows)  # the URL changed outside the editor
        assert len(other.requests) == 1
    assert (server.requests[0].headers["x-api-key"], server.requests[0].headers["accept"]) == (
        "k3y-s3cret", "application/json")
    with pytest.raises(NodeError, match="a Host header cannot be sent with a connection or secret headers"):
        await call(server.url + "/json", secret_headers=rows, headers=[{"name": "Host", "value": "other.test"}])
    assert len(server.requests) == 1


async def test_secret_headers_leave_with_no_next_page_elsewhere_and_clash_with_nothing(server, connections):
    rows = _secret_headers(server.url + "/json", X_Api_Key="k3y-s3cret")
    with RecordingServer() as other:
        await call(server.url + f"/elsewhere?to={other.url}/json", secret_headers=rows,
                   pagination="next_url", next_url_path="body.next")
        assert "x-api-key" not in other.requests[0].headers
    assert server.requests[0].headers["x-api-key"] == "k3y-s3cret"
    sent = len(server.requests)
    with pytest.raises(NodeError, match="header x-api-key is set both in Headers and by the secret headers"):
        await call(server.url + "/json", secret_headers=rows, headers=[{"name": "x-api-key", "value": "plain"}])
    with pytest.raises(NodeError, match="header X-Api-Key is set both by a secret header and by the connection"):
        await call(server.url + "/json", connections, connection="header", secret_headers=rows)
    emptied = [{**row, "value": ""} for row in rows]  # what the editor leaves when the URL moves elsewhere
    with pytest.raises(NodeError, match=r"secret header X-Api-Key is empty \(a secret is cleared when its URL "
                                        r"changes to another address\): enter it again"):
        await call(server.url + "/json", secret_headers=emptied)
    assert len(server.requests) == sent


def test_secret_headers_need_a_written_url():
    from nodeflow_app.secret_values import seal_parameter

    parameter = next(p for p in definition.parameters if p.id == "secret_headers")
    assert parameter.secret and parameter.secret_for == "url"
    with pytest.raises(NodeError, match="Secret headers: set the URL first"):
        seal_parameter(parameter, [{"name": "X-Api-Key", "value": "k"}], {"url": "{{ $json.api }}/items"})


# -- timeout --------------------------------------------------------------------------------------------

async def test_a_timeout_is_a_clear_error(server):
    with pytest.raises(NodeError, match=r"GET http://127\.0\.0\.1:\d+/slow timed out after 0\.3 s"):
        await call(server.url + "/slow?seconds=2", timeout=0.3)


# -- pagination ------------------------------------------------------------------------------------------

async def test_page_number_pagination_stops_at_an_empty_page(server):
    output = await call(server.url + "/pages", pagination="page_number", page_parameter="page",
                        items_path="body.results")
    assert [dict(r.query)["page"] for r in server.requests] == ["1", "2", "3", "4"]
    assert [page["page"] for page in output["pages"]] == [1, 2, 3]
    assert output["items"] == ["item1-1", "item1-2", "item2-1", "item2-2", "item3-1", "item3-2"]
    assert output["status"] == 200


async def test_the_pages_together_are_bounded(server, monkeypatch):
    """Each page was bounded (16 MB), their sum was not: 1,000 pages could hold 16 GB."""
    from nodes.integration.http_request import executor as http_executor

    monkeypatch.setattr(http_executor, "MAX_PAGES_BYTES", 100)  # a page here is ~50 bytes of JSON
    with pytest.raises(NodeError, match=r"the pages together are larger than \d+ MB; lower Max pages"):
        await call(server.url + "/pages", pagination="page_number", page_parameter="page", items_path="body.results")
    assert len(server.requests) == 3


async def test_pagination_stops_at_the_page_limit(server):
    output = await call(server.url + "/pages", pagination="page_number", items_path="body.results", max_pages=2)
    assert len(server.requests) == 2 and len(output["pages"]) == 2 and len(output["items"]) == 4


async def test_next_url_pagination_follows_relative_links_with_the_credential(server, connections):
    output = await call(server.url + "/cursor", connections, connection="query", pagination="next_url",
                        next_url_path="body.links.next", items_path="body.data")
    assert output["items"] == [1, 2, 3]
    assert output["body"]["links"]["next"] is None
    assert [dict(r.query) for r in server.requests] == [
        {"api_key": "q3y"}, {"at": "2", "api_key": "q3y"}, {"at": "3", "api_key": "q3y"}]


# -- the definition -------------------------------------------------------------------------------------

def test_the_definition_keeps_secrets_out_of_the_graph():
    assert definition.side_effects
    assert not {p.id for p in definition.parameters} & {"token", "password", "api_key"}


# -- the example graph, through the CLI -----------------------------------------------------------------

#   Start --> Fetch all items (HTTP Request, page by page) --> Report
def test_the_example_graph_runs_through_the_cli(server, capsys, tmp_path, monkeypatch):
    from nodeflow_app.cli import main
    from tests.nodes.test_code import EXAMPLES

    monkeypatch.delenv("REFLEX_DB_URL", raising=False)
    payload = json.dumps({"api": server.url, "tag": "new"})
    assert main(["run", str(EXAMPLES / "http_request.json"), "--input", payload, "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert lines[-1]["outputs"]["Report"]["output"] == {
        "pages": [{"results": [f"item{n}-1", f"item{n}-2"], "page": n} for n in (1, 2, 3)],
        "first": "item1-1", "last": "item3-2"}
    assert [dict(r.query) for r in server.requests][-1] == {"tag": "new", "page": "4"}


# -- through the kernel: retries come from the node's settings ------------------------------------------

#   Start --> HTTP Request (503, 503, then 200; settings.retry.max_attempts = 3)
async def test_the_kernel_retries_a_failed_status_per_the_node_settings(server):
    from nodeflow_app.runtime.engine import start_run
    from nodes._registry import default_registry

    def graph(attempts):
        return {"id": "g", "name": "g", "nodes": [
            {"id": "start", "type": "manual-trigger", "name": "Start", "data": {}},
            {"id": "http", "type": "http-request", "name": "Flaky", "data": {"url": f"{server.url}/flaky?fail=2"},
             "settings": {"retry": {"max_attempts": attempts, "initial_interval": 0.01}}}],
            "edges": [{"id": "e", "source": "start", "sourceHandle": "output", "target": "http",
                       "targetHandle": "input", "data": {"channel": "flow"}}]}

    run = start_run(graph(3), default_registry())
    events = [event async for event in run.events()]
    assert run.status == "completed" and run.outputs_by_name()["Flaky"]["output"]["body"] == {"call": 3}
    retries = [e.data["message"] for e in events if e.event_type == "progress"]
    assert len(retries) == 2 and "answered 503 Service Unavailable" in retries[0]

    server.requests.clear()
    run = start_run(graph(1), default_registry())
    _ = [event async for event in run.events()]
    assert run.status == "failed" and "answered 503" in run.error and len(server.requests) == 1


async def test_an_api_key_in_the_query_is_not_quoted_in_errors(server, connections, monkeypatch):
    monkeypatch.delenv("NODEFLOW_HTTP_ALLOWLIST")
    with pytest.raises(NodeError) as refused:
        await call(server.url + "/json", connections, connection="query")
    assert "q3y" not in str(refused.value)


async def test_a_multipart_file_is_sent_again_after_a_307(server):
    reference = store_bytes(b"abc", "a.txt", "text/plain")
    await call(server.url + "/redirect?code=307&to=/json", method="POST", body_type="multipart", file=reference)
    assert [r.body.count(b'filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nabc\r\n') for r in server.requests] == [1, 1]


async def test_a_next_url_that_is_not_a_url_is_named(server):
    with pytest.raises(NodeError, match=r"^the next page's URL at 'body.next' \(page 1\) is not a URL: Invalid port"):
        await call(server.url + "/elsewhere?" + urlencode({"to": "http://[::1"}), pagination="next_url",
                   next_url_path="body.next")


async def test_a_next_url_on_another_origin_gets_no_credential(server, connections):
    with RecordingServer() as other:
        output = await call(server.url + f"/elsewhere?to={other.url}/json", connections, connection="bearer",
                            pagination="next_url", next_url_path="body.next")
        assert other.requests[0].headers.get("authorization") is None
    assert server.requests[0].headers["authorization"] == "Bearer t0ken"
    assert output["body"]["ok"] is True and len(output["pages"]) == 2


async def test_stored_files_stop_at_the_workspace_quota(server, tmp_path, monkeypatch):
    """One run (1 GB per response, up to 1,000 pages) could otherwise fill the disk every workspace shares."""
    from nodeflow_app import files

    monkeypatch.setenv(files.QUOTA_ENV, str(len(FILE_BYTES) * 1.5 / 1024 ** 3))  # room for one file, not two
    first = (await call(server.url + "/file"))["body"]
    assert file_path(first).read_bytes() == FILE_BYTES
    with pytest.raises(NodeError, match=r"storing the file 'b.bin' would pass this workspace's quota of stored "
                                        r"files \(.* GB, NODEFLOW_FILES_QUOTA_GB\)"):
        store_bytes(b"y" * len(FILE_BYTES), "b.bin", "application/octet-stream")
    assert store_bytes(FILE_BYTES, "again.pdf", "application/pdf")["file_id"] == first["file_id"]  # stored already
    with pytest.raises(NodeError, match="storing the file 'report.pdf' would pass this workspace's quota"):
        await call(server.url + "/file")  # a streamed body is counted as it arrives, before its content is known
    assert sorted(p.name for p in (tmp_path / "files" / "default").iterdir()) == [first["file_id"]]
    monkeypatch.setenv(files.QUOTA_ENV, "lots")
    with pytest.raises(NodeError, match="NODEFLOW_FILES_QUOTA_GB must be a positive number of gigabytes, got 'lots'"):
        store_bytes(b"z", "c.bin", "application/octet-stream")


async def test_files_stored_at_the_same_moment_share_the_workspace_quota(tmp_path, monkeypatch):
    """The room left was counted once as each download began: 8 downloads of 5 MB at once stored 7 files against
    a 10 MB quota. Each chunk now takes its room with those of the other writes going on."""
    import asyncio

    from nodeflow_app import files

    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    monkeypatch.setenv(files.QUOTA_ENV, str(10 / 1024))  # 10 MB

    async def body(seed: int):
        for _ in range(80):  # 5 MB, a chunk at a time, the downloads taking turns
            yield bytes([seed]) * 65536
            await asyncio.sleep(0)

    async def download(seed: int) -> str:
        try:
            await files.store_stream(body(seed), f"{seed}.bin", "application/octet-stream", 1024 ** 3, "ws1")
            return "stored"
        except NodeError as error:
            return str(error)

    outcomes = await asyncio.gather(*(download(seed) for seed in range(8)))
    stored = files.files_dir("ws1")
    assert files.folder_bytes(stored) <= 10 * 1024 * 1024, outcomes
    assert 1 <= outcomes.count("stored") <= 2 and len(list(stored.iterdir())) == outcomes.count("stored")
    assert all("would pass this workspace's quota" in outcome for outcome in outcomes if outcome != "stored")
    for path in stored.iterdir():
        path.unlink()
    store_bytes(b"x" * 10 * 1024 * 1024, "all.bin", "application/octet-stream", "ws1")  # nothing is left reserved


async def test_a_pasted_key_s_line_break_is_dropped_and_unsendable_headers_are_named_without_their_value(
        server, connections):
    """httpx refused them quoting the value: a secret header's or a connection's key reached the run's error."""
    connections.set("pasted", "http_bearer", {"token": "sk-live-SECRET123\n", "hosts": "http://127.0.0.1"})
    await call(server.url + "/json", connections, connection="pasted",
               secret_headers=_secret_headers(server.url + "/json", X_Api_Key="HDRSECRET-456\r\n"))
    sent = server.requests[-1].headers
    assert (sent["authorization"], sent["x-api-key"]) == ("Bearer sk-live-SECRET123", "HDRSECRET-456")
    with pytest.raises(NodeError) as inside:
        await call(server.url + "/json", secret_headers=_secret_headers(server.url + "/json", X_Api_Key="HDR\nSECRET"))
    assert str(inside.value) == ("the secret header or connection's header 'X-Api-Key': its value holds a line break, "
                                 "which a header cannot carry") and "SECRET" not in str(inside.value)
    with pytest.raises(NodeError, match="header 'X-Name': its value holds a character other than ASCII"):
        await call(server.url + "/json", headers=[{"name": "X-Name", "value": "José"}])
    with pytest.raises(NodeError, match="header 'X Name': a header name is letters, digits and -"):
        await call(server.url + "/json", headers=[{"name": "X Name", "value": "x"}])


@pytest.mark.parametrize("url", ["http://[::1/", "http://[zz]/"])
async def test_a_url_that_does_not_parse_is_named(server, url):
    with pytest.raises(NodeError, match=r"parameter 'url' is not a URL \("):
        await call(url)
