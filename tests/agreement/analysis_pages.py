"""The pages whose statistics are computed on request (the ranking, a judge's calibration)."""

from django.urls import reverse


def computed_page(client, name: str, *args):
    """Page ``name`` once its statistics are computed: its Compute button pressed (in the
    tests the job runs inside that request), then the page it sends back to."""
    page = client.post(reverse(f"{name}_compute", args=args), follow=True)
    assert page.redirect_chain[-1][0] == reverse(name, args=args)
    assert "pending" not in page.context, "the statistics were not computed"
    return page
