"""The client's retries and jobs, against scripted answers: what is retried, how long it
waits, and what is never sent twice. (No server: a requests adapter plays the answers.)"""

import json

import pytest
import requests
from concord_client import Concord, JobFailed, RetryPolicy, ServerError, Throttled, TransportError
from concord_client.transport import Transport, retry_after_seconds
from requests.adapters import BaseAdapter
from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError

BASE = "http://concord.test/api/v1/"


class Scripted(BaseAdapter):
    """Answers each request with the next step: a (status, body, headers) or an exception."""

    def __init__(self, steps):
        super().__init__()
        self.steps, self.sent = list(steps), []

    def send(self, request, **kwargs):
        self.sent.append((request.method, request.url, request.body))
        step = self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        status, body, *headers = step
        response = requests.Response()
        response.status_code, response.url, response.request = status, request.url, request
        response._content = json.dumps(body).encode() if body is not None else b""
        response.headers.update({"Content-Type": "application/json", **(headers or [{}])[0]})
        return response

    def close(self):
        pass


def transport(steps, attempts=4):
    adapter, waits = Scripted(steps), []
    session = requests.Session()
    session.mount("http://", adapter)
    http = Transport(
        BASE,
        "concord_x",
        session=session,
        retry=RetryPolicy(attempts=attempts, backoff=1.0, max_wait=8.0),
        sleep=waits.append,
    )
    return http, adapter, waits


def refused_connection():
    reason = NewConnectionError(None, "Connection refused")
    return requests.ConnectionError(MaxRetryError(None, BASE, reason))


def broken_connection():
    return requests.ConnectionError(ProtocolError("Connection aborted."))


OK = (200, {"ok": True})


def test_a_read_is_retried_on_a_gateway_error_with_growing_waits():
    http, adapter, waits = transport([(502, None), (503, None), (504, None), OK])
    assert http.json("GET", "studies/x/") == {"ok": True}
    assert len(adapter.sent) == 4
    # 1, 2, 4 seconds, each with up to a quarter added so that clients spread out.
    for wait, base in zip(waits, (1, 2, 4), strict=True):
        assert base <= wait <= base * 1.25


def test_a_throttled_request_waits_as_the_server_says_and_is_retried_even_a_post():
    # The throttle refuses before the endpoint runs: nothing was done, so a POST is safe.
    http, adapter, waits = transport([(429, None, {"Retry-After": "3"}), (201, {"slug": "s"})])
    assert http.json("POST", "studies/", json={"slug": "s"}) == {"slug": "s"}
    assert waits == [3.0] and [m for m, _, _ in adapter.sent] == ["POST", "POST"]


def test_a_post_is_never_sent_twice_after_a_gateway_error_or_a_broken_connection():
    http, adapter, _ = transport([(502, None)])
    with pytest.raises(ServerError) as failed:
        http.json("POST", "studies/", json={"slug": "s"})
    assert failed.value.status == 502 and len(adapter.sent) == 1
    http, adapter, _ = transport([broken_connection()])
    with pytest.raises(TransportError):
        http.json("POST", "studies/", json={"slug": "s"})
    assert len(adapter.sent) == 1


def test_a_post_the_server_never_received_is_sent_again():
    http, adapter, _ = transport([refused_connection(), refused_connection(), (201, {})])
    assert http.json("POST", "studies/", json={"slug": "s"}) == {}
    assert len(adapter.sent) == 3


def test_a_post_documented_as_idempotent_is_retried_like_a_read():
    http, adapter, _ = transport([broken_connection(), (503, None), (200, {"created": {}})])
    assert http.json("POST", "studies/x/assign/", idempotent=True) == {"created": {}}
    assert len(adapter.sent) == 3


def test_retries_end_with_the_last_answer_as_an_error():
    http, adapter, waits = transport([(429, None)] * 3, attempts=3)
    with pytest.raises(Throttled) as throttled:
        http.json("GET", "studies/")
    assert throttled.value.status == 429 and len(adapter.sent) == 3 and len(waits) == 2
    http, adapter, _ = transport([broken_connection()] * 3, attempts=3)
    with pytest.raises(TransportError):
        http.json("GET", "studies/")
    assert len(adapter.sent) == 3


def test_a_wait_is_bounded_whatever_the_server_asks():
    http, _, waits = transport([(429, None, {"Retry-After": "86400"}), OK])
    http.json("GET", "studies/")
    assert waits == [8.0]


def test_retry_after_is_read_as_seconds_or_as_a_date():
    assert retry_after_seconds("12") == 12.0
    assert retry_after_seconds("Wed, 02 Dec 2026 00:00:30 GMT", now=1796169600.0) == 30.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


def test_an_answer_that_is_not_the_apis_shape_is_still_a_clear_error():
    http, _, _ = transport([(502, None)], attempts=1)
    with pytest.raises(ServerError) as failed:
        http.json("GET", "studies/")
    assert failed.value.code == "http_error" and "502" in str(failed.value)


def test_a_job_is_followed_until_it_ends_and_a_failed_one_raises():
    steps = [
        (200, {"state": "running", "stage": "writing", "done": 1, "total": 3}),
        (200, {"state": "done", "created": {"R-01": 4}}),
    ]
    http, adapter, waits = transport(steps)
    job = http.wait_job({"job": BASE + "studies/x/assign/u/", "state": "running"}, poll=0.5)
    assert job["created"] == {"R-01": 4} and job["job"] == BASE + "studies/x/assign/u/"
    assert waits == [0.5, 0.5] and len(adapter.sent) == 2
    http, _, _ = transport([(200, {"state": "failed", "problem": "Too few raters."})])
    with pytest.raises(JobFailed) as failed:
        http.wait_job(BASE + "studies/x/assign/u/")
    assert failed.value.problem == "Too few raters."


def test_the_client_takes_a_sites_address_or_the_apis():
    assert Concord("https://c.example.org", "t").http.base == "https://c.example.org/api/v1/"
    assert Concord("https://c.example.org/api/v1", "t").http.base == "https://c.example.org/api/v1/"
    prefixed = Concord("https://example.org/concord/", "t").http
    assert prefixed.url("studies/") == "https://example.org/concord/api/v1/studies/"
    # A next page or a job's URL, as the API gives them, is taken as it is.
    assert prefixed.url("https://example.org/x/?page=2") == "https://example.org/x/?page=2"


def scripted_client(steps):
    concord = Concord("http://concord.test", "concord_x", job_poll=0, retry=RetryPolicy(1))
    adapter = Scripted(steps)
    concord.http.session.mount("http://", adapter)
    return concord, adapter


def test_a_ranking_computed_as_a_job_is_waited_for():
    # The contract of the ranking endpoint: POST answers 202 while its job runs; GET again.
    computing = {"state": "computing", "job": {"state": "running", "done": 1, "total": 4}}
    steps = [(202, computing), (200, computing), (200, {"state": "computed", "ranking": {}})]
    concord, adapter = scripted_client(steps)
    assert concord.ranking("arena", compute=True)["state"] == "computed"
    assert [m for m, _, _ in adapter.sent] == ["POST", "GET", "GET"]
    assert adapter.sent[1][1] == BASE + "studies/arena/ranking/"


def test_a_ratings_import_that_fails_raises_with_each_rows_problem():
    job = BASE + "studies/s/ratings-import/0b7f9a34-2c1d-4b8e-9f3e-1a2b3c4d5e6f/"
    problem = {"row": 3, "column": "System", "message": "no system named 'gpt'"}
    steps = [
        (202, {"job": job, "state": "running", "problems": []}, {"Location": job}),
        (200, {"job": job, "state": "failed", "problems": [problem]}),
    ]
    concord, adapter = scripted_client(steps)
    with pytest.raises(JobFailed) as failed:
        concord.ratings_import("s", b"Case ID,System\n", filename="ratings.csv")
    assert failed.value.problems == [problem]
    assert "row 3, column System: no system named 'gpt'" in str(failed.value)
    assert b'filename="ratings.csv"' in adapter.sent[0][2] and adapter.sent[1][1] == job
