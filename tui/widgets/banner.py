"""Alerts that need a person, above the application view."""

from __future__ import annotations

from rich.text import Text

from kubectl_spark.core.model import App

from .safe import safe
from .steady import SteadyStatic


class AlertsBanner(SteadyStatic):
    def show(self, app: App | None) -> None:
        if app is None or not app.alerts:
            self.update("")
            self.display = False
            return
        self.display = True
        text = Text()
        for i, alert in enumerate(app.alerts):
            if i:
                text.append("\n")
            text.append(f"⚠ {alert.type}: ", style="bold red")
            text.append_text(safe(alert.message))
        self.update(text)
