"""The main navigation: one list of links, each shown to the people it is for.

To add a page to the navigation, add a ``NavLink`` to ``LINKS`` (in the order shown) with
who may see it; the base template renders whatever this context processor returns.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.urls import reverse

from studies import access
from studies.selectors import coordinated_studies

# How many studies the administrators' "Quality control" menu lists.
QC_MENU_STUDIES = 10


@dataclass(frozen=True)
class NavLink:
    label: str
    url_name: str
    # Who sees the link: "everyone" signed in, "coordinators" (coordinate a study or may
    # create one), "creators" (may create studies) or "admins" (staff).
    audience: str
    # For a menu: a function of the user returning [(label, url)], read only when shown.
    entries: Callable | None = None


def _qc_entries(user) -> list[tuple[str, str]]:
    studies = coordinated_studies(user=user).started()
    return [
        (study.name, reverse("agreement:qc", args=[study.slug]))
        for study in studies.order_by("-created_at")[:QC_MENU_STUDIES]
    ]


LINKS = [
    NavLink("My studies", "home", "everyone"),
    NavLink("Studies", "studies:list", "coordinators"),
    NavLink("New study", "studies:create", "creators"),
    NavLink("Quality control", "studies:list", "admins", entries=_qc_entries),
    NavLink("Identity erasure", "studies:erasure", "admins"),
    NavLink("Django admin", "admin:index", "admins"),
]


def _audiences(user) -> set[str]:
    audiences = {"everyone"}
    if access.can_create_studies(user):
        audiences |= {"creators", "coordinators"}
    elif coordinated_studies(user=user).exists():
        audiences.add("coordinators")
    if user.is_staff:
        audiences.add("admins")
    return audiences


def navigation(request) -> dict:
    """``nav_links``: [{label, url, active, entries}] for the signed-in user; [] otherwise."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav_links": []}
    audiences = _audiences(user)
    links = []
    for link in LINKS:
        if link.audience not in audiences:
            continue
        url = reverse(link.url_name)
        entries = link.entries(user) if link.entries else None
        links.append(
            {
                "label": link.label,
                "url": url,
                "active": entries is None and request.path == url,
                "entries": entries,
            }
        )
    return {"nav_links": links}
