"""Apimachinery's ``duration.HumanDuration``: how long ago, as kubectl prints AGE.

Shared by the core (``ls``'s AGE) and the emulator (the AGE cells of the tables it serves to
kubectl), which import nothing of each other; so it lives beside both.
"""

from __future__ import annotations


def human_duration(seconds: float) -> str:
    """Apimachinery HumanDuration for a positive duration."""
    s = int(seconds)  # Go's int(d.Seconds()) truncates toward zero
    if s < -1:
        return "<invalid>"  # 2 s or more in the future
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = (s % 3600) // 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if rest == 0 else f"{hours // 24 // 365}y{rest}d"
    return f"{hours // 24 // 365}y"
