"""The controls of a chart, built from its options as the export registry describes them (``ChartOption``):
a list for a choice, a number box for a number, a tick box for a flag, each with its label and tooltip.

``set_chart(options, project, wanted, context)`` lays out the controls of one chart and fills them, each choice
offered as its option says given the page's own choices (``context``: the model of a tab, or data the page has
read) and the options before it (the second model of a comparison is another model), keeping what is in
``wanted`` (by option name or by the name the choice is remembered under) where it is still offered, else the
option's default. ``values()`` are the chart's options as chosen; ``changed`` says the person changed one.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QSpinBox, QWidget

from workbench.errors import UserError
from workbench.export.registry import CHOICE, FLAG, NUMBER, ChartOption, resolve_options


class ChartControls(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.options: tuple[ChartOption, ...] = ()
        self.project = None
        self.context: dict[str, Any] = {}
        self.widgets: dict[str, QWidget] = {}  # option name -> its control
        self.labels: dict[str, QLabel] = {}
        self._loading = False
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(0, 0, 0, 0)

    # ------------------------------------------------------------------ building
    def set_chart(self, options: tuple[ChartOption, ...], project: Any, wanted: dict[str, Any],
                  context: dict[str, Any] | None = None) -> None:
        """The controls of ``options``, filled for ``project`` with the ``wanted`` values where offered."""
        if tuple(options) != self.options:
            self._build(options)
        self.project, self.context = project, dict(context or {})
        self.fill(wanted)

    def _build(self, options: tuple[ChartOption, ...]) -> None:
        while self.row.count():
            item = self.row.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.widgets, self.labels = {}, {}
        self.options = tuple(options)
        for option in self.options:
            if option.kind == FLAG:
                widget = QCheckBox(option.label)
                widget.toggled.connect(self._changed)
            elif option.kind == NUMBER:
                widget = QSpinBox()
                widget.setRange(option.low, option.high)
                widget.setSuffix(option.suffix)
                widget.setKeyboardTracking(False)  # typing 20 draws once, not for 2 and then 20
                widget.valueChanged.connect(self._changed)
            else:
                widget = QComboBox()
                widget.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
                widget.currentIndexChanged.connect(self._changed)
            widget.setObjectName(f"chart-option-{option.name}")
            widget.setToolTip(option.tooltip)
            if option.kind != FLAG:
                label = QLabel(option.label)
                label.setToolTip(option.tooltip)
                self.labels[option.name] = label
                self.row.addSpacing(8)
                self.row.addWidget(label)
                label.show()  # now, not a turn of the event loop later (as a layout would)
            self.widgets[option.name] = widget
            self.row.addWidget(widget)
            widget.show()

    def fill(self, wanted: dict[str, Any] | None = None) -> None:
        """Offer each option's choices given the ones before it; keep the value shown (or ``wanted``) where it is
        still offered, else take the option's default (``registry.resolve_options``)."""
        wanted = dict(wanted or {})
        merged = {option.name: self._value(option) for option in self.options}
        for option in self.options:
            for name in (option.key, option.name):
                if wanted.get(name) is not None:
                    merged[option.name] = wanted[name]
        self._loading = True
        try:
            for option, offered, value in resolve_options(self.options, self.project, merged, self.context):
                widget = self.widgets[option.name]
                if option.kind == CHOICE:
                    widget.clear()
                    for text, data in offered:
                        widget.addItem(text, data)
                    index = widget.findData(value) if value is not None else -1
                    widget.setCurrentIndex(index if index >= 0 else (0 if offered else -1))
                elif option.kind == NUMBER:
                    widget.setValue(int(value))
                else:
                    widget.setChecked(bool(value))
        finally:
            self._loading = False

    # ------------------------------------------------------------------ values
    def _value(self, option: ChartOption) -> Any:
        widget = self.widgets.get(option.name)
        if widget is None:
            return None
        if option.kind == FLAG:
            return widget.isChecked()
        if option.kind == NUMBER:
            return widget.value()
        return widget.currentData() if widget.count() else None

    def values(self) -> dict[str, Any]:
        """The chart's options as chosen, by option name."""
        return {option.name: self._value(option) for option in self.options}

    def remembered(self) -> dict[str, Any]:
        """The values by the names they are remembered under (shared by charts)."""
        return {option.key: self._value(option) for option in self.options}

    def empty_choices(self) -> list[ChartOption]:
        """The list options that offer nothing (no model has results yet, say)."""
        return [o for o in self.options if o.kind == CHOICE and not self.widgets[o.name].count()]

    def option_named(self, name: str) -> ChartOption | None:
        return next((o for o in self.options if name in (o.name, o.key)), None)

    def set_value(self, name: str, value: Any) -> None:
        """Choose ``value`` for the option ``name`` (its name, or the name it is remembered under) without
        announcing it; a value not offered raises ``UserError``."""
        option = self.option_named(name)
        if option is None:
            raise UserError(f"This chart has no choice called '{name}'.")
        widget = self.widgets[option.name]
        self._loading = True
        try:
            if option.kind == FLAG:
                widget.setChecked(bool(value))
            elif option.kind == NUMBER:
                widget.setValue(int(value))
            else:
                index = widget.findData(value)
                if index < 0:
                    raise UserError(f"'{value}' is not one of the choices here.")
                widget.setCurrentIndex(index)
        finally:
            self._loading = False

    def widget(self, name: str) -> QWidget | None:
        option = self.option_named(name)
        return self.widgets.get(option.name) if option is not None else None

    def show_what_matters(self, frame) -> None:
        """Grey out the controls that change nothing in the chart drawn from ``frame`` (the number of books
        named when every book is named anyway)."""
        for option in self.options:
            if option.matters is not None:
                self.widgets[option.name].setEnabled(bool(option.matters(frame)))

    def _changed(self, *_: Any) -> None:
        if self._loading:
            return
        self.fill()  # later choices may depend on this one
        self.changed.emit()
