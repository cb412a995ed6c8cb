"""Refilling a choice list from the project without losing what the person chose."""

from __future__ import annotations

from typing import Any, Iterable

from PySide6.QtWidgets import QComboBox


def refill(combo: QComboBox, items: Iterable[tuple[str, Any]], wanted: Any = None) -> None:
    """Replace ``combo``'s (text, data) items without emitting change signals, choosing ``wanted`` or else
    the item chosen before, where it is still offered (else the first)."""
    current = wanted if wanted is not None else combo.currentData()
    combo.blockSignals(True)
    combo.clear()
    for text, data in items:
        combo.addItem(text, data)
    index = combo.findData(current)
    combo.setCurrentIndex(index if index >= 0 else 0)
    combo.blockSignals(False)


def refill_names(combo: QComboBox, names: Iterable[str], *, blank: str | None = None) -> None:
    """``refill`` with names that are their own data; ``blank`` first, standing for none (data None)."""
    items = ([(blank, None)] if blank is not None else []) + [(name, name) for name in names]
    refill(combo, items)
