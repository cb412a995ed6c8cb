"""Every message box the app shows goes through here (tests replace ``ask`` to answer questions)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import QMessageBox, QWidget


@dataclass(frozen=True)
class Message:
    text: str
    details: str = ""
    error: bool = False


def show_error(parent: QWidget | None, message: str, details: str = "") -> None:
    message_box(parent, Message(message, details, error=True))


def show_info(parent: QWidget | None, message: str) -> None:
    message_box(parent, Message(message))


def ask(parent: QWidget | None, question: str) -> bool:
    return question_box(parent, question)


def message_box(parent: QWidget | None, message: Message) -> None:
    icon = QMessageBox.Icon.Warning if message.error else QMessageBox.Icon.Information
    box = QMessageBox(icon, "Palimpsest", message.text, parent=parent)
    if message.details:
        box.setDetailedText(message.details)
    box.exec()


def question_box(parent: QWidget | None, question: str) -> bool:
    return QMessageBox.question(parent, "Palimpsest", question) == QMessageBox.StandardButton.Yes
