"""The client's reading of a status code (SCENARIOS.md, "How the client classifies what it got")."""

import pytest

from idemsim.base.http import Response, classify, fingerprint


class TestClassify:
    @pytest.mark.parametrize("status", [200, 201, 204])
    def test_2xx_is_ok(self, status):
        """A 2xx answer means the operation definitely happened."""
        assert classify(status) == "ok"

    @pytest.mark.parametrize("status", [400, 404, 422])
    def test_400_and_422_are_fail(self, status):
        """400, 422 (and other 4xx a server sends without acting) mean it definitely did not happen."""
        assert classify(status) == "fail"

    @pytest.mark.parametrize("status", [409, 429, 500, 503, 504])
    def test_409_and_5xx_are_info(self, status):
        """409 and any 5xx, a gateway's 504 included, leave the client not knowing."""
        assert classify(status) == "info"

    def test_a_deletes_404_is_ok(self):
        """A DELETE answered 404 or 410 is ok: the resource is gone, as asked (a GET's 404 stays fail)."""
        assert (classify(404, "DELETE"), classify(410, "DELETE"), classify(404, "GET")) == ("ok", "ok", "fail")

    def test_no_answer_is_info_never_fail(self):
        """A timeout or lost response is info: the client cannot tell it from a lost request."""
        assert classify(None) == "info"


class TestFingerprint:
    def test_same_body_same_fingerprint(self):
        """Key order does not change a body's fingerprint."""
        assert fingerprint({"amount": 1000, "currency": "jpy"}) == fingerprint({"currency": "jpy", "amount": 1000})

    def test_different_body_different_fingerprint(self):
        """Another amount is another request."""
        assert fingerprint({"amount": 1000}) != fingerprint({"amount": 2000})


def test_stored_response_replays_the_same_answer():
    """A response read back from its record has the same status and body, marked as a replay."""
    original = Response(201, {"id": "ch_1", "amount": 1000})
    replayed = Response.from_stored(original.stored())
    assert (replayed.status, replayed.body, replayed.replay) == (201, {"id": "ch_1", "amount": 1000}, True)
