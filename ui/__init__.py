"""The PySide6 desktop app (charts drawn by matplotlib, as the exported figures are): thin views over ``workbench``. No science here."""
