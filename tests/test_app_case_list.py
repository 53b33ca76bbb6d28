"""The case list (Case → Open): one row per case, filtered by name and description as you type."""

from __future__ import annotations

from datetime import UTC, datetime

from app.store import CaseSummary
from app.views.case_list import CaseListDialog


def summary(case_id: int, title: str, description: str, steps: int, day: int) -> CaseSummary:
    moment = datetime(2026, 11, day, 9, 30, tzinfo=UTC)
    return CaseSummary(case_id, title, description, "open", moment, moment, None, steps)


def test_the_case_list_filters_by_name_and_description_and_opens_what_is_selected(qtbot):
    cases = [summary(1, "Gate 4 theft", "red jacket, black backpack", 3, 1),
             summary(2, "Parking lot", "grey van, two men", 0, 2),
             summary(3, "Demo: the woman in the red jacket", "", 4, 3)]
    dialog = CaseListDialog(cases, current=2)
    qtbot.addWidget(dialog)
    assert dialog.visible_names()[0] == "Demo: the woman in the red jacket"  # most recently changed first
    assert dialog.chosen_id() == 2 and dialog.open_button.isEnabled()
    dialog.search.setText("RED JACKET")  # names and descriptions, any case
    assert sorted(dialog.visible_names()) == ["Demo: the woman in the red jacket", "Gate 4 theft"]
    assert dialog.chosen_id() in (1, 3) and dialog.open_button.isEnabled()
    dialog.search.setText("van")
    assert dialog.visible_names() == ["Parking lot"] and dialog.chosen_id() == 2
    dialog.search.setText("nothing like this")
    assert dialog.visible_names() == [] and dialog.chosen_id() is None and not dialog.open_button.isEnabled()
