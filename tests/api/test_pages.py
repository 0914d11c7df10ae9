"""The audit page: served without a key, and built only on the API's own endpoints."""

import re


def test_the_audit_page_is_served_and_calls_only_api_endpoints(client):
    response = client.get("/pages/audit")
    assert response.status_code == 200 and response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    # Check it replays deals, checks fairness and draws reports from the endpoints that exist.
    calls = set(re.findall(r"`(/[a-z]+)[/?$]", page))
    assert calls == {"/deals", "/reports"}
    assert "/replay" in page and "/fairness" in page and "<svg" in page
    assert "http://" not in page and "https://" not in page  # no CDN, no other host
