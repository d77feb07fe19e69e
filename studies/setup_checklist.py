"""What a study needs before it starts: the set-up checklist of the Overview and the Open page.

``study_setup_checklist`` (in ``studies.selectors``) is the one owner of the list. Some of its
items are about what the higher apps keep (the training examples in ``annotation``, the
analysis plan in ``agreement``), which ``studies`` never reads: those apps register a reader
here when they load, as they do for ``studies.activity``, and the list asks them.
"""

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ChecklistItem:
    order: int  # where it stands in the list
    title: str
    done: bool
    detail: str  # what there is, or what is missing, in a sentence
    url_name: str  # the page where it is set up, reversed with the study's slug
    optional: bool = False  # recommended by the protocol, but a study can start without it
    anchor: str = ""  # e.g. "#primary-question", added to the page's address
    # A trap to point out even when the item is done ("the attention check reaches nobody"):
    # shown on the item, and above the Open button.
    warning: str = ""


@dataclass(frozen=True)
class SetupChecklist:
    items: list[ChecklistItem]

    @property
    def next(self) -> ChecklistItem | None:
        """The first item missing, a required one before an optional one."""
        missing = [item for item in self.items if not item.done]
        return next((i for i in missing if not i.optional), missing[0] if missing else None)

    @property
    def warnings(self) -> list[ChecklistItem]:
        """The items with a warning, in the list's order."""
        return [item for item in self.items if item.warning]


_readers: list[Callable[..., list[ChecklistItem]]] = []


def checklist_reader_register(reader: Callable[..., list[ChecklistItem]]) -> None:
    """Register ``reader(study=...)``; registering the same reader twice is harmless."""
    if reader not in _readers:
        _readers.append(reader)


def checklist_items_registered(*, study) -> list[ChecklistItem]:
    return [item for reader in _readers for item in reader(study=study)]
